package lint

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ProbeKind names the three probes.
type ProbeKind string

// The probes of a container.
const (
	Liveness  ProbeKind = "liveness"
	Readiness ProbeKind = "readiness"
	Startup   ProbeKind = "startup"
)

// field is the probe's field name in a container spec.
func (k ProbeKind) field() string { return string(k) + "Probe" }

// probeOf returns container c's probe of kind k, or nil.
func probeOf(c ContainerRef, k ProbeKind) *corev1.Probe {
	switch k {
	case Liveness:
		return c.LivenessProbe
	case Readiness:
		return c.ReadinessProbe
	case Startup:
		return c.StartupProbe
	}
	return nil
}

// Timing is a probe's schedule with the API server's defaults applied.
type Timing struct {
	InitialDelay time.Duration
	Period       time.Duration
	Timeout      time.Duration
	Failure      int32
	Success      int32
}

// timingOf reads p's schedule, defaulting unset fields as the API server does (period 10s,
// timeout 1s, failureThreshold 3, successThreshold 1); negative values, which the API server
// rejects (PG016), read as unset.
func timingOf(p *corev1.Probe) Timing {
	t := Timing{
		InitialDelay: seconds(max(p.InitialDelaySeconds, 0)),
		Period:       seconds(p.PeriodSeconds),
		Timeout:      seconds(p.TimeoutSeconds),
		Failure:      p.FailureThreshold,
		Success:      p.SuccessThreshold,
	}
	if t.Period <= 0 {
		t.Period = 10 * time.Second
	}
	if t.Timeout <= 0 {
		t.Timeout = time.Second
	}
	if t.Failure <= 0 {
		t.Failure = 3
	}
	if t.Success <= 0 {
		t.Success = 1
	}
	return t
}

func seconds(n int32) time.Duration { return time.Duration(n) * time.Second }

// Window is a span after a fault starts, during which a probe reacts.
type Window struct {
	Earliest, Latest time.Duration
}

func (w Window) String() string { return fmt.Sprintf("[%s, %s]", fmtDur(w.Earliest), fmtDur(w.Latest)) }

// DetectionWindow is when the probe's failureThreshold-th consecutive failure lands after a fault
// starts: at best (F−1)·P (the fault begins just before a probe), at worst F·P + timeout (just after
// one, and the last probe hangs until it times out).
func (t Timing) DetectionWindow() Window {
	return Window{
		Earliest: time.Duration(t.Failure-1) * t.Period,
		Latest:   time.Duration(t.Failure)*t.Period + t.Timeout,
	}
}

// KillAfter is the earliest moment after container start at which this probe, failing from its
// first run, reaches failureThreshold: initialDelay + (F−1)·P. A bootstrap must end before it to be
// safe; the often-quoted budget initialDelay + F·P is one period more generous than the kubelet.
func (t Timing) KillAfter() time.Duration {
	return t.InitialDelay + time.Duration(t.Failure-1)*t.Period
}

// schedule describes the timing fields in manifest terms.
func (t Timing) schedule() string {
	return fmt.Sprintf("period %s, timeout %s, failureThreshold %d", fmtDur(t.Period), fmtDur(t.Timeout), t.Failure)
}

// fmtDur prints a duration compactly: 31s, 1.5s, 2m0s.
func fmtDur(d time.Duration) string {
	if d%time.Second == 0 && d < time.Minute {
		return strconv.Itoa(int(d/time.Second)) + "s"
	}
	return d.String()
}

// handlersEqual reports whether two probes run the same check, treating unset HTTP scheme and path
// as their defaults and ignoring HTTP headers: a header does not give the server another handler
// unless the application branches on it, which the manifest cannot show.
func handlersEqual(a, b *corev1.Probe) bool {
	return reflect.DeepEqual(normalHandler(a.ProbeHandler), normalHandler(b.ProbeHandler))
}

// headersDiffer reports whether two HTTP probes send different headers.
func headersDiffer(a, b *corev1.Probe) bool {
	if a.HTTPGet == nil || b.HTTPGet == nil {
		return false
	}
	return len(a.HTTPGet.HTTPHeaders)+len(b.HTTPGet.HTTPHeaders) > 0 && !reflect.DeepEqual(a.HTTPGet.HTTPHeaders, b.HTTPGet.HTTPHeaders)
}

// failureThresholdAbove is the smallest failureThreshold that makes a probe with period p wait at
// least d before its failureThreshold-th consecutive failure: (F−1)·P ≥ d.
func failureThresholdAbove(p, d time.Duration) int32 {
	if p <= 0 {
		return 1
	}
	return int32((d+p-1)/p) + 1
}

// seconds32 prints a duration as whole seconds, rounded up, for a manifest field.
func seconds32(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

func normalHandler(h corev1.ProbeHandler) corev1.ProbeHandler {
	if h.HTTPGet != nil {
		g := *h.HTTPGet
		if g.Scheme == "" {
			g.Scheme = corev1.URISchemeHTTP
		}
		if g.Path == "" {
			g.Path = "/"
		}
		g.HTTPHeaders = nil
		h.HTTPGet = &g
	}
	return h
}

// describeHandler prints a probe's check: "GET :8080/health/live", "TCP :5432", "exec [cat /tmp/ok]".
func describeHandler(p *corev1.Probe) string {
	switch {
	case p.HTTPGet != nil:
		scheme := ""
		if p.HTTPGet.Scheme == corev1.URISchemeHTTPS {
			scheme = "https "
		}
		path := p.HTTPGet.Path
		if path == "" {
			path = "/"
		}
		return fmt.Sprintf("%sGET :%s%s", scheme, p.HTTPGet.Port.String(), path)
	case p.TCPSocket != nil:
		return "TCP :" + p.TCPSocket.Port.String()
	case p.GRPC != nil:
		return fmt.Sprintf("gRPC :%d", p.GRPC.Port)
	case p.Exec != nil:
		return "exec [" + strings.Join(p.Exec.Command, " ") + "]"
	}
	return "no handler"
}

// httpPath returns the probe's HTTP path without a query, or "" for other handlers.
func httpPath(p *corev1.Probe) string {
	if p == nil || p.HTTPGet == nil {
		return ""
	}
	path := p.HTTPGet.Path
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if path == "" {
		path = "/"
	}
	return path
}

// hasHandler reports whether p names exactly one check (the API server rejects anything else).
func hasHandler(p *corev1.Probe) bool { return handlerCount(p) == 1 }

// handlerCount counts the handlers p sets: httpGet, tcpSocket, grpc, exec.
func handlerCount(p *corev1.Probe) int {
	n := 0
	for _, set := range []bool{p.HTTPGet != nil, p.TCPSocket != nil, p.GRPC != nil, p.Exec != nil} {
		if set {
			n++
		}
	}
	return n
}

// Checks named for what they answer: a word "ready", "readyz" or "readiness" (/health/ready,
// -felix-ready), or "live", "alive", "livez" or "liveness" (/livez, sentinel_liveness.sh), set off
// from the letters around it ("already" and "delivery" are neither).
var (
	readinessNamed = regexp.MustCompile(`(?i)(^|[^a-z])(ready|readyz|readiness)([^a-z]|$)`)
	livenessNamed  = regexp.MustCompile(`(?i)(^|[^a-z])(a?live|livez|liveness)([^a-z]|$)`)
)

// namedForReadiness reports whether p's check is named for readiness.
func namedForReadiness(p *corev1.Probe) bool { return readinessNamed.MatchString(describeHandler(p)) }

// namedForLiveness reports whether p's check is named for liveness.
func namedForLiveness(p *corev1.Probe) bool { return livenessNamed.MatchString(describeHandler(p)) }
