package timeline

import "time"

// ErrorClass says how a request failed.
type ErrorClass string

// Request error classes.
const (
	ErrNone      ErrorClass = ""
	ErrRefused   ErrorClass = "refused"    // connection refused
	ErrReset     ErrorClass = "reset"      // connection reset or closed mid-request (EOF)
	ErrTimeout   ErrorClass = "timeout"    // client timeout
	ErrHTTP5xx   ErrorClass = "http-5xx"   // the server answered 5xx
	ErrHTTPOther ErrorClass = "http-other" // any other non-2xx status
	ErrOther     ErrorClass = "other"

	// gRPC calls whose server answered with a status other than OK: ErrGRPCServer for a server-side
	// failure, as an HTTP 5xx (UNAVAILABLE, INTERNAL, UNKNOWN, DATA_LOSS, UNIMPLEMENTED,
	// DEADLINE_EXCEEDED), ErrGRPCOther for any other code, as an HTTP 4xx (RESOURCE_EXHAUSTED,
	// NOT_FOUND, …). A call that failed before any answer (no connection, a connection cut, the
	// client's deadline) takes the transport classes above, as an HTTP request would.
	ErrGRPCServer ErrorClass = "grpc-server"
	ErrGRPCOther  ErrorClass = "grpc-other"
	// ErrNotServing: the gRPC health service answered OK, but with a serving status other than SERVING.
	ErrNotServing ErrorClass = "not-serving"
)

// Transport reports whether c is a failure of the connection rather than an answer of the server
// (an HTTP status, a gRPC status or a health service's serving status).
func (c ErrorClass) Transport() bool {
	switch c {
	case ErrNone, ErrHTTP5xx, ErrHTTPOther, ErrGRPCServer, ErrGRPCOther, ErrNotServing:
		return false
	}
	return true
}

// Request is one load-generator request, as written to requests.jsonl. T is the request's start
// as an offset from the timeline's start; Pod is the serving pod, named by the response header or
// found afterwards from the connection (PodFrom says which).
type Request struct {
	Seq     uint64        `json:"seq"`
	T       time.Duration `json:"t"`
	Start   time.Time     `json:"start"`
	Latency time.Duration `json:"latency"`
	Status  int           `json:"status"`
	// GRPC is a gRPC call's status code name (OK, UNAVAILABLE, DEADLINE_EXCEEDED, …); "" for an HTTP
	// request. A gRPC call has no HTTP Status.
	GRPC   string     `json:"grpc,omitempty"`
	Error  ErrorClass `json:"error,omitempty"`
	Detail string     `json:"detail,omitempty"`
	Pod    string     `json:"pod,omitempty"`
	// PodFrom says how Pod was learnt: PodFromHeader or PodFromConntrack ("" when Pod is empty).
	PodFrom string `json:"podFrom,omitempty"`
	// ConntrackPod is the pod the node's conntrack traced the request's connection to, set only when
	// it is not the pod the header named (Pod): the two disagree.
	ConntrackPod string `json:"conntrackPod,omitempty"`
	// Conn is the client's local address (ip:port) of the connection the request's last attempt
	// went over, "" when no connection was made.
	Conn string `json:"conn,omitempty"`
	// ConnAt is when that connection was opened (its dial began: its first SYN, on which kube-proxy's
	// DNAT chose the pod, left then), zero when unknown. A request
	// on a "new" connection (not Reused) can still go over one opened before the request started:
	// net/http gives a dial that finished too late for its own request to the next one waiting.
	ConnAt time.Time `json:"connAt,omitzero"`
	// FlowAt is when the node's conntrack reported the connection's NEW flow (its DNAT to the pod,
	// as conntrack's listener received the event), zero when no timed flow was matched.
	FlowAt time.Time `json:"flowAt,omitzero"`
	Bytes  uint64    `json:"bytes"`
	// Reused is true when the request went over a kept-alive connection (when known).
	Reused bool `json:"reused,omitempty"`
	// Source names where the request was sent from when not from probegate's own process: the
	// in-cluster load agent, as pod@node (its node's kube-proxy routed it).
	Source string `json:"source,omitempty"`
	// Retried is true when the client sent the request more than once: its first attempt's kept-alive
	// connection broke before a response (a server cut it), and Go's transport resent it, as it does
	// for idempotent requests. Status and Pod are the last attempt's.
	Retried bool `json:"retried,omitempty"`
	// Upstream is the pod address (ip:port) a front door that keeps its own record (an ingress
	// controller) sent the request to, on its last attempt; DoorRetries counts the attempts it
	// made before that one, on other servers. NoUpstream is set when the door answered the
	// request itself (no server to send it to): it reached no pod.
	Upstream    string `json:"upstream,omitempty"`
	DoorRetries int    `json:"doorRetries,omitempty"`
	NoUpstream  bool   `json:"noUpstream,omitempty"`
}

// OK reports whether the request succeeded: a 2xx or 3xx status, or a gRPC call that ended OK.
func (r Request) OK() bool {
	if r.GRPC != "" {
		return r.Error == ErrNone && r.GRPC == "OK"
	}
	return r.Error == ErrNone && r.Status >= 200 && r.Status < 400
}

// Class names why the request failed (ErrNone when it succeeded), deriving a class from the status
// when the load generator left none.
func (r Request) Class() ErrorClass {
	switch {
	case r.OK():
		return ErrNone
	case r.Error != ErrNone:
		return r.Error
	case r.GRPC != "":
		return ErrGRPCServer
	case r.Status >= 500:
		return ErrHTTP5xx
	case r.Status != 0:
		return ErrHTTPOther
	}
	return ErrOther
}

// ConnT is when the request's connection was opened, as an offset from the timeline's start; ok is
// false when that is unknown (a request from before connections were dated, or none made).
func (r Request) ConnT() (t time.Duration, ok bool) {
	if r.ConnAt.IsZero() || r.Start.IsZero() {
		return 0, false
	}
	return r.T + r.ConnAt.Sub(r.Start), true
}

// KernelRouted is, for a request on a new connection whose conntrack flow was matched, the pod the
// node's kernel DNAT'd that connection to (conntrack's pod where the header disagreed) and when the
// connection was opened; ok is false for a reused connection, an undated one or one without a flow.
func (r Request) KernelRouted() (pod string, opened time.Duration, ok bool) {
	opened, dated := r.ConnT()
	if r.Reused || r.FlowAt.IsZero() || !dated {
		return "", 0, false
	}
	pod = r.Pod
	if r.ConntrackPod != "" {
		pod = r.ConntrackPod
	}
	return pod, opened, true
}

// FlowT is when conntrack reported the request's flow, as an offset from the timeline's start.
func (r Request) FlowT() (t time.Duration, ok bool) {
	if r.FlowAt.IsZero() || r.Start.IsZero() {
		return 0, false
	}
	return r.T + r.FlowAt.Sub(r.Start), true
}

// End is the instant the response completed, as an offset from the timeline's start.
func (r Request) End() time.Duration { return r.T + r.Latency }
