package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// grpcMethod is the unary call a gRPC load makes: the method, one request message shared by every
// call (marshalling only reads it) and the response's type.
type grpcMethod struct {
	name        string
	request     proto.Message
	newResponse func() proto.Message
	// check, when set, finds a failure in an OK answer.
	check func(proto.Message) error
}

// errNotServing is a health check answered OK with a serving status other than SERVING.
type errNotServing struct {
	status healthpb.HealthCheckResponse_ServingStatus
}

func (e errNotServing) Error() string { return "health: " + e.status.String() }

// healthMethod is the standard health service's Check, asking about service (or, when reqJSON is
// set, with that request message), failed unless the answer is SERVING.
func healthMethod(service, reqJSON string) (*grpcMethod, error) {
	req := &healthpb.HealthCheckRequest{Service: service}
	if reqJSON != "" {
		if err := protojson.Unmarshal([]byte(reqJSON), req); err != nil {
			return nil, fmt.Errorf("loadgen: gRPC method %s: request message: %w", HealthCheckMethod, err)
		}
	}
	return &grpcMethod{
		name:        HealthCheckMethod,
		request:     req,
		newResponse: func() proto.Message { return &healthpb.HealthCheckResponse{} },
		check: func(m proto.Message) error {
			if st := m.(*healthpb.HealthCheckResponse).GetStatus(); st != healthpb.HealthCheckResponse_SERVING {
				return errNotServing{st}
			}
			return nil
		},
	}, nil
}

// resolveMethod learns name's request and response types from the server's reflection service
// (grpc.reflection.v1) and builds the request from reqJSON, as dynamic messages. Only unary methods
// are accepted.
func resolveMethod(ctx context.Context, cc grpc.ClientConnInterface, name, reqJSON string) (*grpcMethod, error) {
	svc, meth, _ := strings.Cut(strings.TrimPrefix(name, "/"), "/")
	files, err := reflectFiles(ctx, cc, svc)
	if errors.Is(err, errNoSymbol) {
		return nil, fmt.Errorf("loadgen: gRPC method %s: the server has no service %s", name, svc)
	}
	if err != nil {
		return nil, fmt.Errorf("loadgen: gRPC method %s: server reflection: %w", name, err)
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(svc))
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if err != nil || !ok {
		return nil, fmt.Errorf("loadgen: gRPC method %s: the server has no service %s", name, svc)
	}
	md := sd.Methods().ByName(protoreflect.Name(meth))
	if md == nil {
		return nil, fmt.Errorf("loadgen: gRPC method %s: service %s has no method %s", name, svc, meth)
	}
	if md.IsStreamingClient() || md.IsStreamingServer() {
		return nil, fmt.Errorf("loadgen: gRPC method %s: streaming; only unary methods are supported", name)
	}
	req := dynamicpb.NewMessage(md.Input())
	if reqJSON != "" {
		if err := protojson.Unmarshal([]byte(reqJSON), req); err != nil {
			return nil, fmt.Errorf("loadgen: gRPC method %s: request message (%s): %w", name, md.Input().FullName(), err)
		}
	}
	out := md.Output()
	return &grpcMethod{name: name, request: req, newResponse: func() proto.Message { return dynamicpb.NewMessage(out) }}, nil
}

// reflectFiles asks the reflection service for the file defining symbol and every file it depends
// on, and returns them as a registry. A dependency the server does not serve is taken from the
// well-known types linked into this binary (google/protobuf/*.proto).
func reflectFiles(ctx context.Context, cc grpc.ClientConnInterface, symbol string) (*protoregistry.Files, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := reflectionpb.NewServerReflectionClient(cc).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, err
	}
	ask := func(req *reflectionpb.ServerReflectionRequest) ([][]byte, error) {
		// A Send that meets a stream the server already ended says only io.EOF; the status
		// (Unimplemented from a server without reflection) is what Recv then returns.
		if err := stream.Send(req); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		resp, err := stream.Recv()
		if err != nil {
			return nil, err
		}
		if e := resp.GetErrorResponse(); e != nil {
			return nil, status.Error(codes.Code(e.GetErrorCode()), e.GetErrorMessage())
		}
		return resp.GetFileDescriptorResponse().GetFileDescriptorProto(), nil
	}
	got := map[string]*descriptorpb.FileDescriptorProto{}
	var order []string
	add := func(raw [][]byte) error {
		for _, b := range raw {
			fd := &descriptorpb.FileDescriptorProto{}
			if err := proto.Unmarshal(b, fd); err != nil {
				return fmt.Errorf("decode file descriptor: %w", err)
			}
			if _, ok := got[fd.GetName()]; !ok {
				got[fd.GetName()] = fd
				order = append(order, fd.GetName())
			}
		}
		return nil
	}
	raw, err := ask(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: symbol},
	})
	switch status.Code(err) {
	case codes.Unimplemented:
		return nil, errNoReflection
	case codes.NotFound:
		return nil, errNoSymbol
	}
	if err != nil {
		return nil, fmt.Errorf("symbol %s: %w", symbol, err)
	}
	if err := add(raw); err != nil {
		return nil, err
	}
	// grpc-go sends the dependencies along; other servers may need asking for each.
	for i := 0; i < len(order); i++ {
		for _, dep := range got[order[i]].GetDependency() {
			if _, ok := got[dep]; ok {
				continue
			}
			raw, err := ask(&reflectionpb.ServerReflectionRequest{
				MessageRequest: &reflectionpb.ServerReflectionRequest_FileByFilename{FileByFilename: dep},
			})
			if err != nil {
				fd, gerr := protoregistry.GlobalFiles.FindFileByPath(dep)
				if gerr != nil {
					return nil, fmt.Errorf("file %s: %w", dep, err)
				}
				raw = nil
				got[dep] = protodesc.ToFileDescriptorProto(fd)
				order = append(order, dep)
			}
			if err := add(raw); err != nil {
				return nil, err
			}
		}
	}
	set := &descriptorpb.FileDescriptorSet{}
	for _, n := range order {
		set.File = append(set.File, got[n])
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, fmt.Errorf("build descriptors: %w", err)
	}
	return files, nil
}

// errNoSymbol: the reflection service knows no such symbol (the server serves no such service).
var errNoSymbol = errors.New("no such symbol")

// errNoReflection: the server does not serve reflection, so no method but the health check can be
// called (the load has no compiled-in message types).
var errNoReflection = errors.New("the server does not serve grpc.reflection.v1: only the health check can be called without it")
