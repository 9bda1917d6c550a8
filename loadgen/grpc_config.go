package loadgen

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// HealthCheckMethod is the standard gRPC health service's Check method, the default call.
const HealthCheckMethod = "/grpc.health.v1.Health/Check"

// GRPCConfig describes one gRPC load run: unary calls of one method at a paced rate, plaintext, over
// Clients connections to Target.
type GRPCConfig struct {
	// Target is host:port; the host must be a loopback IP literal (or AllowHost).
	Target string
	// Method is the full method name, /pkg.Service/Method. Empty means HealthCheckMethod.
	Method string
	// Service is the service name the health check asks about ("" is the server as a whole). Used
	// only when Method is HealthCheckMethod and Request is empty.
	Service string
	// Request is the request message as protobuf JSON ("" is the empty message). For any method but
	// the health check, the message type is learnt from the server's reflection service.
	Request string

	// PodHeader is the response metadata key that names the serving pod (DefaultPodHeader when
	// empty); it is read from the headers or, for an error with no headers, the trailers.
	// IgnorePodHeader leaves Request.Pod empty whatever the response says.
	PodHeader       string
	IgnorePodHeader bool

	// Rate, Phases, Duration and Count pace and bound the run as in Config.
	Rate     float64
	Phases   []Phase
	Duration time.Duration
	Count    uint64

	Timeout time.Duration // each call's deadline; DefaultTimeout when 0
	// AllowHost is one more address the load may go to besides loopback, as in Config.
	AllowHost string
	// Clients is how many independent client connections share the calls, taking them in turn (1
	// when 0). A gRPC client multiplexes every call over one long-lived connection, which kube-proxy
	// balances once; N connections are spread over the pods as N callers' would be.
	Clients int
	// MaxInFlight caps concurrent calls (0: unbounded); a call due while the cap is reached is sent
	// late.
	MaxInFlight uint64

	// Timeline, Requests, OnRequest and Logger are as in Config.
	Timeline  *timeline.Timeline
	Requests  io.Writer
	OnRequest func(timeline.Request)
	Logger    *slog.Logger
}

func (c GRPCConfig) withDefaults() GRPCConfig {
	if c.Method == "" {
		c.Method = HealthCheckMethod
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.PodHeader == "" {
		c.PodHeader = DefaultPodHeader
	}
	if c.Clients == 0 {
		c.Clients = 1
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if len(c.Phases) == 0 {
		c.Phases = []Phase{{Rate: c.Rate}}
	}
	return c
}

func (c GRPCConfig) validate() error {
	if err := CheckGRPCTarget(c.Target, c.AllowHost); err != nil {
		return err
	}
	if c.Clients < 0 {
		return fmt.Errorf("loadgen: clients must not be negative, got %d", c.Clients)
	}
	if err := checkMethodName(c.Method); err != nil {
		return err
	}
	if c.Service != "" && (c.Method != HealthCheckMethod || c.Request != "") {
		return errors.New("loadgen: a health service name goes only with the health check and no request message")
	}
	// The pacing rules are the HTTP load's; check them with its own validation.
	return Config{URL: "http://" + c.Target, AllowHost: c.AllowHost, Timeline: c.Timeline, Phases: c.Phases,
		Duration: c.Duration, Count: c.Count}.validate()
}

// CheckGRPCTarget returns an error unless target is host:port with an explicit port and a host that
// is a loopback IP literal or exactly allow (when not empty).
func CheckGRPCTarget(target, allow string) error {
	host, port, err := net.SplitHostPort(target)
	if err != nil || port == "" {
		return fmt.Errorf("loadgen: gRPC target %q: want host:port, e.g. 127.0.0.1:9999", target)
	}
	if err := checkHost(host, allow); err != nil {
		return fmt.Errorf("loadgen: gRPC target %q: %w", target, err)
	}
	return nil
}

// checkMethodName accepts /pkg.Service/Method.
func checkMethodName(m string) error {
	svc, name, ok := strings.Cut(strings.TrimPrefix(m, "/"), "/")
	if !strings.HasPrefix(m, "/") || !ok || svc == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("loadgen: gRPC method %q: want /package.Service/Method", m)
	}
	return nil
}
