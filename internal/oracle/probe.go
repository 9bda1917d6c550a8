package oracle

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Probe kinds, matching timeline.ProbeLiveness and friends.
const (
	Liveness  = "liveness"
	Readiness = "readiness"
	Startup   = "startup"
)

// Kubernetes API defaults for a probe whose fields are zero.
const (
	DefaultPeriod           = 10 * time.Second
	DefaultTimeout          = 1 * time.Second
	DefaultFailureThreshold = 3
	DefaultSuccessThreshold = 1
)

// ProbeTiming is one probe's settings with the API defaults applied.
type ProbeTiming struct {
	Kind             string        `json:"kind"`
	Handler          string        `json:"handler"`
	InitialDelay     time.Duration `json:"initialDelay"`
	Period           time.Duration `json:"period"`
	Timeout          time.Duration `json:"timeout"`
	FailureThreshold int32         `json:"failureThreshold"`
	SuccessThreshold int32         `json:"successThreshold"`
	// TerminationGracePeriod is the probe-level override of the pod's grace period for a kill this
	// probe causes (liveness and startup only), when set.
	TerminationGracePeriod *time.Duration `json:"terminationGracePeriod,omitempty"`
}

// NewProbeTiming reads p (of the given kind) with the API's defaults for zero fields. It returns
// nil when p is nil.
func NewProbeTiming(kind string, p *corev1.Probe) *ProbeTiming {
	if p == nil {
		return nil
	}
	t := &ProbeTiming{
		Kind:             kind,
		Handler:          describeHandler(p.ProbeHandler),
		InitialDelay:     seconds(int64(p.InitialDelaySeconds)),
		Period:           seconds(int64(p.PeriodSeconds)),
		Timeout:          seconds(int64(p.TimeoutSeconds)),
		FailureThreshold: p.FailureThreshold,
		SuccessThreshold: p.SuccessThreshold,
	}
	if t.Period <= 0 {
		t.Period = DefaultPeriod
	}
	if t.Timeout <= 0 {
		t.Timeout = DefaultTimeout
	}
	if t.FailureThreshold <= 0 {
		t.FailureThreshold = DefaultFailureThreshold
	}
	if t.SuccessThreshold <= 0 {
		t.SuccessThreshold = DefaultSuccessThreshold
	}
	if p.TerminationGracePeriodSeconds != nil && kind != Readiness {
		g := seconds(*p.TerminationGracePeriodSeconds)
		t.TerminationGracePeriod = &g
	}
	return t
}

// Detection is the window after a fault starts in which the probe's F-th consecutive failure can
// happen: the first failing probe runs within one period of the fault, the F-th (F−1) periods
// later, and a hanging probe only fails once its timeout expires.
func (p ProbeTiming) Detection() (min, max time.Duration) {
	f := time.Duration(p.FailureThreshold)
	return (f - 1) * p.Period, f*p.Period + p.Timeout
}

// Recovery is the window after a fault is reverted in which the probe's S-th consecutive success
// can happen.
func (p ProbeTiming) Recovery() (min, max time.Duration) {
	s := time.Duration(p.SuccessThreshold)
	return (s - 1) * p.Period, s*p.Period + p.Timeout
}

// Summary is "F=3 × P=10s, timeout 1s".
func (p ProbeTiming) Summary() string {
	return fmt.Sprintf("F=%d × P=%s, timeout %s", p.FailureThreshold, p.Period, p.Timeout)
}

func describeHandler(h corev1.ProbeHandler) string {
	switch {
	case h.HTTPGet != nil:
		scheme := "http"
		if h.HTTPGet.Scheme == corev1.URISchemeHTTPS {
			scheme = "https"
		}
		return fmt.Sprintf("%s GET :%s%s", scheme, h.HTTPGet.Port.String(), h.HTTPGet.Path)
	case h.TCPSocket != nil:
		return "tcp :" + h.TCPSocket.Port.String()
	case h.GRPC != nil:
		s := fmt.Sprintf("grpc :%d", h.GRPC.Port)
		if h.GRPC.Service != nil && *h.GRPC.Service != "" {
			s += " " + *h.GRPC.Service
		}
		return s
	case h.Exec != nil:
		return fmt.Sprintf("exec %q", h.Exec.Command)
	}
	return "none"
}

func seconds(n int64) time.Duration { return time.Duration(n) * time.Second }
