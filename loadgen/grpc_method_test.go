package loadgen

import (
	"context"
	"errors"
	"io"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// endedStream is a reflection stream the server has already ended with a status: grpc-go's Send
// then says only io.EOF, and Recv gives the status.
type endedStream struct{ code codes.Code }

func (endedStream) Header() (metadata.MD, error) { return nil, nil }
func (endedStream) Trailer() metadata.MD         { return nil }
func (endedStream) CloseSend() error             { return nil }
func (endedStream) Context() context.Context     { return context.Background() }
func (endedStream) SendMsg(any) error            { return io.EOF }
func (s endedStream) RecvMsg(any) error          { return status.Error(s.code, "ended") }

type endedConn struct{ code codes.Code }

func (endedConn) Invoke(context.Context, string, any, any, ...grpc.CallOption) error {
	return errors.New("not used")
}

func (c endedConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return endedStream(c), nil
}

// TestReflectFilesReadsTheStatusBehindEOF: a server without reflection may end the stream before
// the request is sent (the loaded CI host did: "symbol …: EOF"); the refusal still names the missing
// reflection service, read from the stream's status.
func TestReflectFilesReadsTheStatusBehindEOF(t *testing.T) {
	if _, err := reflectFiles(context.Background(), endedConn{codes.Unimplemented}, "grpc.testing.TestService"); !errors.Is(err, errNoReflection) {
		t.Errorf("error %v; want %v", err, errNoReflection)
	}
	if _, err := reflectFiles(context.Background(), endedConn{codes.NotFound}, "grpc.testing.TestService"); !errors.Is(err, errNoSymbol) {
		t.Errorf("error %v; want %v", err, errNoSymbol)
	}
}
