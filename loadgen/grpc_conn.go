package loadgen

import (
	"context"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc/stats"
)

// GRPCConn is one TCP connection a gRPC client opened during the load. Local is the key by which the
// node's conntrack table names the pod it was pinned to.
type GRPCConn struct {
	Client int    `json:"client"` // which of the Clients connections opened it (from 0)
	Local  string `json:"local"`  // the client's local address, ip:port
	Remote string `json:"remote"`
	// OpenedAt is when its dial began (its first SYN, on which kube-proxy's DNAT chose the pod).
	OpenedAt time.Time `json:"openedAt"`
	// ClosedAt is when the connection ended while the load ran (after the server's GOAWAY, or cut);
	// zero when it was still open when the last call completed.
	ClosedAt time.Time `json:"closedAt,omitzero"`
	// Calls counts the calls recorded on it; FirstCall and LastCall are the first and last of their
	// start times.
	Calls     uint64    `json:"calls"`
	FirstCall time.Time `json:"firstCall,omitzero"`
	LastCall  time.Time `json:"lastCall,omitzero"`
	// Pods counts its calls by the pod the response metadata named (when the app names one).
	Pods map[string]uint64 `json:"pods,omitempty"`
}

// grpcConns tracks the connections the clients open (through dialer), the streams each carries and
// when each ends (through the stats handler). Safe for concurrent use.
type grpcConns struct {
	mu      sync.Mutex
	byLocal map[string]*grpcConnState
	order   []*grpcConnState
}

type grpcConnState struct {
	GRPCConn
	streams uint64 // streams opened on it, every attempt counted
}

func newGRPCConns() *grpcConns { return &grpcConns{byLocal: map[string]*grpcConnState{}} }

// dialer returns the dialer of client: loopback (or allow) only, noting each connection it opens.
func (t *grpcConns) dialer(client int, d *net.Dialer, allow string) func(context.Context, string) (net.Conn, error) {
	dial := loopbackDial(d, allow)
	return func(ctx context.Context, addr string) (net.Conn, error) {
		began := time.Now()
		c, err := dial(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		s := &grpcConnState{GRPCConn: GRPCConn{
			Client: client, Local: c.LocalAddr().String(), Remote: c.RemoteAddr().String(), OpenedAt: began,
		}}
		t.mu.Lock()
		t.byLocal[s.Local] = s
		t.order = append(t.order, s)
		t.mu.Unlock()
		return c, nil
	}
}

// stream counts a stream opened on the connection local and reports whether it was the first, and
// when the connection was opened (zero when it is not one of the load's).
func (t *grpcConns) stream(local string) (first bool, opened time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.byLocal[local]
	if s == nil {
		return false, time.Time{}
	}
	s.streams++
	return s.streams == 1, s.OpenedAt
}

func (t *grpcConns) closed(local string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.byLocal[local]; s != nil && s.ClosedAt.IsZero() {
		s.ClosedAt = at
	}
}

// snapshot returns the connections in the order they were opened.
func (t *grpcConns) snapshot() []GRPCConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]GRPCConn, len(t.order))
	for i, s := range t.order {
		out[i] = s.GRPCConn
	}
	return out
}

// grpcCall is what the stats handler learns about one call: the connection its last attempt went
// over and when that was opened, whether that attempt was the connection's first stream, whether the server answered with a
// status (trailers), the pod the metadata named, the response's size and how many attempts it took
// (grpc-go transparently retries a call that never reached the server, as after a GOAWAY race).
type grpcCall struct {
	mu       sync.Mutex
	conn     string
	connAt   time.Time
	first    bool
	answered bool
	pod      string
	bytes    uint64
	attempts int
}

type grpcCallKey struct{}
type grpcConnKey struct{}

// grpcStats is the stats.Handler each client connection reports to.
type grpcStats struct {
	conns     *grpcConns
	podHeader string // the metadata key naming the pod (metadata.MD.Get ignores case)
}

func (h grpcStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (h grpcStats) HandleRPC(ctx context.Context, s stats.RPCStats) {
	c, _ := ctx.Value(grpcCallKey{}).(*grpcCall)
	if c == nil || !s.IsClient() {
		return
	}
	var local string
	var first bool
	var opened time.Time
	if o, ok := s.(*stats.OutHeader); ok && o.LocalAddr != nil {
		local = o.LocalAddr.String()
		first, opened = h.conns.stream(local)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s := s.(type) {
	case *stats.Begin:
		c.attempts++
	case *stats.OutHeader:
		c.conn, c.connAt, c.first, c.answered, c.pod = local, opened, first, false, ""
	case *stats.InHeader:
		c.notePod(s.Header.Get(h.podHeader))
	case *stats.InTrailer:
		c.answered = true
		c.notePod(s.Trailer.Get(h.podHeader))
	case *stats.InPayload:
		c.bytes += uint64(s.Length)
	}
}

func (c *grpcCall) notePod(vs []string) {
	if len(vs) > 0 && vs[0] != "" {
		c.pod = vs[0]
	}
}

func (h grpcStats) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	if info.LocalAddr == nil {
		return ctx
	}
	return context.WithValue(ctx, grpcConnKey{}, info.LocalAddr.String())
}

func (h grpcStats) HandleConn(ctx context.Context, s stats.ConnStats) {
	if _, ok := s.(*stats.ConnEnd); ok {
		if local, _ := ctx.Value(grpcConnKey{}).(string); local != "" {
			h.conns.closed(local, time.Now())
		}
	}
}
