package loadgen

import (
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/probegate/probegate/internal/timeline"
)

// grpcCodeNames are the status codes' canonical names, as the gRPC spec and other languages print them.
var grpcCodeNames = [...]string{
	codes.OK: "OK", codes.Canceled: "CANCELLED", codes.Unknown: "UNKNOWN",
	codes.InvalidArgument: "INVALID_ARGUMENT", codes.DeadlineExceeded: "DEADLINE_EXCEEDED",
	codes.NotFound: "NOT_FOUND", codes.AlreadyExists: "ALREADY_EXISTS",
	codes.PermissionDenied: "PERMISSION_DENIED", codes.ResourceExhausted: "RESOURCE_EXHAUSTED",
	codes.FailedPrecondition: "FAILED_PRECONDITION", codes.Aborted: "ABORTED",
	codes.OutOfRange: "OUT_OF_RANGE", codes.Unimplemented: "UNIMPLEMENTED", codes.Internal: "INTERNAL",
	codes.Unavailable: "UNAVAILABLE", codes.DataLoss: "DATA_LOSS", codes.Unauthenticated: "UNAUTHENTICATED",
}

// grpcCodeName returns c's canonical name (UNAVAILABLE, DEADLINE_EXCEEDED, …).
func grpcCodeName(c codes.Code) string {
	if int(c) < len(grpcCodeNames) {
		return grpcCodeNames[c]
	}
	return "CODE(" + c.String() + ")"
}

// classifyGRPC maps a finished call to its status code name, error class and detail. answered says
// whether the server's status (trailers) arrived: a call with none failed in the client or the
// transport, and takes the transport classes by its message, as classify does for HTTP; a status
// the server sent is ErrGRPCServer for a server-side code (as an HTTP 5xx) or ErrGRPCOther.
func classifyGRPC(err error, answered bool) (code string, class timeline.ErrorClass, detail string) {
	if err == nil {
		return "OK", timeline.ErrNone, ""
	}
	if ns := (errNotServing{}); errors.As(err, &ns) {
		return "OK", timeline.ErrNotServing, ns.Error()
	}
	st := status.Convert(err)
	code, detail = grpcCodeName(st.Code()), st.Message()
	if !answered {
		switch st.Code() {
		case codes.DeadlineExceeded, codes.Canceled:
			return code, timeline.ErrTimeout, detail
		}
		msg := strings.ToLower(detail)
		if strings.Contains(msg, "transport is closing") || strings.Contains(msg, "closing transport") ||
			strings.Contains(msg, "goaway") || strings.Contains(msg, "stream terminated by rst_stream") {
			return code, timeline.ErrReset, detail
		}
		return code, classify(0, detail), detail
	}
	switch st.Code() {
	case codes.Unavailable, codes.Internal, codes.Unknown, codes.DataLoss, codes.Unimplemented, codes.DeadlineExceeded:
		return code, timeline.ErrGRPCServer, detail
	}
	return code, timeline.ErrGRPCOther, detail
}
