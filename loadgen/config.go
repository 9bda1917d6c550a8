// Package loadgen drives constant-rate HTTP load at the target with vegeta and records every
// request: each one is streamed to JSON Lines as a timeline.Request as it completes, and every second
// of load is summarised onto the timeline as a timeline.LoadWindow. The load goes only to loopback
// addresses (the ports kind publishes on 127.0.0.1); any other host is refused.
//
// Requests are placed on a fixed schedule (hit h at the instant the rate's integral reaches h), so a
// run of d seconds at r per second sends exactly r·d requests; a late hit is still sent. Whether a
// request reused a kept-alive connection is read with httptrace. A request belongs to the second it
// started in; a window's entry is stamped at the start of its second and written once every request
// of that second must have completed (request timeout + 1 s), with exact p50/p99 over the raw
// latencies of all its requests. A second in which nothing was sent still gets a window (Sent 0,
// SuccessRatio 1).
//
// StartGRPC drives the same paced load as unary gRPC calls with grpc-go, plaintext: the standard
// health check by default, or any unary method with a JSON request typed from the server's
// reflection service. Each call is a timeline.Request whose GRPC field holds the status code name;
// a call that failed before the server's status arrived takes the transport classes, an answered
// failure grpc-server, grpc-other or not-serving. The calls go over Clients connections, each
// dialled (loopback only) through a dialer that notes its local address and opening time; the
// GRPCReport lists every connection with its calls, by which conntrack can name the pod it was
// pinned to.
package loadgen

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// DefaultPodHeader is the response header that names the pod that served a request.
const DefaultPodHeader = "X-Probegate-Pod"

// DefaultTimeout bounds each request (connect, headers and body).
const DefaultTimeout = 5 * time.Second

// Phase is a stretch of load at one rate. A Phase with For == 0 lasts until the run ends; only the
// last phase may have it.
type Phase struct {
	Rate float64       // requests per second; 0 pauses the load
	For  time.Duration // how long the phase lasts
}

// Config describes one load run.
type Config struct {
	// URL is the target, e.g. http://127.0.0.1:18080/. Its host must be a loopback IP literal.
	URL    string
	Method string // GET when empty
	// Header is sent with every request ("Host" sets the Host header: an ingress rule's host).
	Header http.Header

	// Rate is the constant rate in requests per second, used when Phases is empty.
	Rate float64
	// Phases, when set, replaces Rate with a sequence of rates (e.g. steady, overload, steady).
	Phases []Phase
	// Duration bounds the run; 0 means until Count is reached, the phases end or Stop is called.
	Duration time.Duration
	// Count bounds the number of requests; 0 means no bound.
	Count uint64

	Timeout time.Duration // per request; DefaultTimeout when 0
	// NewConnectionPerRequest turns keep-alive off: every request dials a fresh connection. The
	// default (keep-alive) is the realistic client: kube-proxy keeps existing connections to a pod
	// even after its endpoint is withdrawn.
	NewConnectionPerRequest bool
	PodHeader               string // DefaultPodHeader when empty
	// IgnorePodHeader leaves Request.Pod empty whatever the response says, as for an app that sends
	// no pod header (to measure attribution without it).
	IgnorePodHeader bool
	// AllowHost is one more address the load may go to besides loopback: the kind node container's
	// own IP on its docker network, whose NodePort connections the node's conntrack table maps to
	// pods (Docker's userland proxy in front of 127.0.0.1 hides the client's port). Only an IP
	// literal; the caller vouches that it is the cluster's own container.
	AllowHost string
	// Clients is how many independent clients share the load, each with its own connection pool,
	// taking requests in turn (1 when 0). One Go client reuses its most recently used connection, so
	// a light kept-alive load runs over one or two connections to one or two pods; N clients hold
	// about N connections, spread by the Service over the pods as many callers' would be.
	Clients int
	// MaxWorkers caps concurrent requests (0: unbounded, vegeta adds workers as responses slow).
	MaxWorkers uint64

	// Timeline receives the per-second LoadWindows and load-start / load-end marks; request offsets
	// count from its start. Required.
	Timeline *timeline.Timeline
	// Requests receives every request as one JSON line, in completion order. Optional.
	Requests io.Writer
	// OnRequest, when set, is called with every request as it is recorded (from one goroutine).
	OnRequest func(timeline.Request)

	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Method == "" {
		c.Method = http.MethodGet
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.PodHeader == "" {
		c.PodHeader = DefaultPodHeader
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if len(c.Phases) == 0 {
		c.Phases = []Phase{{Rate: c.Rate}}
	}
	return c
}

func (c Config) validate() error {
	if c.Clients < 0 {
		return fmt.Errorf("loadgen: clients must not be negative, got %d", c.Clients)
	}
	if err := CheckURL(c.URL, c.AllowHost); err != nil {
		return err
	}
	if c.Timeline == nil {
		return errors.New("loadgen: a timeline is required")
	}
	for i, p := range c.Phases {
		if p.Rate < 0 {
			return fmt.Errorf("loadgen: phase %d: negative rate %g", i+1, p.Rate)
		}
		if p.For < 0 || (p.For == 0 && i != len(c.Phases)-1) {
			return fmt.Errorf("loadgen: phase %d: only the last phase may run without a length", i+1)
		}
	}
	if c.Duration < 0 {
		return fmt.Errorf("loadgen: negative duration %v", c.Duration)
	}
	if c.Duration == 0 && c.Count == 0 && c.Phases[len(c.Phases)-1].For == 0 {
		return errors.New("loadgen: the run needs a bound: a duration, a count or phases of fixed length")
	}
	if last := c.Phases[len(c.Phases)-1]; c.Duration == 0 && last.For == 0 && last.Rate == 0 {
		return errors.New("loadgen: the last phase has rate 0 and no end: the run would never finish")
	}
	return nil
}

// CheckLoopbackURL returns an error unless raw is an http URL whose host is a loopback IP literal.
// Host names are refused too (even localhost), so nothing depends on name resolution.
func CheckLoopbackURL(raw string) error { return CheckURL(raw, "") }

// CheckURL is CheckLoopbackURL that also accepts the IP literal allow (the kind node's address)
// when it is not empty.
func CheckURL(raw, allow string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("loadgen: target URL %q: %w", raw, err)
	}
	if u.Scheme != "http" {
		return fmt.Errorf("loadgen: target URL %q: only http is supported", raw)
	}
	if u.Port() == "" {
		return fmt.Errorf("loadgen: target URL %q: give the published port explicitly (127.0.0.1:<port>)", raw)
	}
	if err := checkHost(u.Hostname(), allow); err != nil {
		return fmt.Errorf("loadgen: target URL %q: %w", raw, err)
	}
	return nil
}

// checkHost accepts a loopback IP literal, or exactly allow when it is an IP literal.
func checkHost(host, allow string) error {
	if a, ip := net.ParseIP(allow), net.ParseIP(host); a != nil && ip != nil && a.Equal(ip) {
		return nil
	}
	return checkLoopbackHost(host)
}

func checkLoopbackHost(host string) error {
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("host %q is not a loopback address; load goes only to 127.0.0.1", host)
	}
	return nil
}
