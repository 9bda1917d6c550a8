package oracle

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Pod-template annotations the oracle reads. Values are seconds ("5", "2.5") or Go durations ("1500ms").
const (
	AnnotationWithdrawal  = "probegate.dev/withdrawal-seconds"  // routing withdrawal delay before the app stops accepting
	AnnotationDrain       = "probegate.dev/drain-seconds"       // maximum admitted work to finish on shutdown
	AnnotationCleanup     = "probegate.dev/cleanup-seconds"     // closing pools, flushing telemetry after the drain
	AnnotationPropagation = "probegate.dev/propagation-seconds" // kubelet → EndpointSlice → kube-proxy allowance
	// App lags: how long the app itself takes to turn a fault into a failing (or, for recovery, a
	// passing) probe endpoint, such as a dependency check interval × hysteresis + its budget, or a
	// heartbeat staleness bound. Added to the window's Max, capped at one period of the probe that
	// reads it (see Assumption).
	AnnotationReadinessLag = "probegate.dev/readiness-lag-seconds"
	AnnotationRecoveryLag  = "probegate.dev/recovery-lag-seconds"
	AnnotationLivenessLag  = "probegate.dev/liveness-lag-seconds"
)

// Defaults for the allowances the pod spec does not state.
const (
	// DefaultPropagation covers kubelet → API → EndpointSlice → kube-proxy. Measured on the kind
	// cluster: an endpoint went ready=false 0.6–1.1 s after kubelet saw the change.
	DefaultPropagation = 2 * time.Second
	// DefaultRestartAllowance covers the runtime starting the new container and kubelet reporting
	// the raised restartCount after the old one is gone.
	DefaultRestartAllowance = 2 * time.Second
	// DefaultMargin is the termination budget's safety margin.
	DefaultMargin = 2 * time.Second
	// DefaultGracePeriod is terminationGracePeriodSeconds when the spec leaves it unset.
	DefaultGracePeriod = 30 * time.Second
)

// Ceilings of the allowances a target (annotation) or a scenario (oracle option) may widen by hand,
// as the app lags are capped at one probe period (capLag): past them the allowance would hide what
// it is meant to time. Each is 2.5× its default; the default propagation is itself about twice the
// slowest measured on the kind cluster (1.1 s).
const (
	MaxPropagation      = 5 * time.Second
	MaxRestartAllowance = 5 * time.Second
)

// Names of the allowances the oracle lists among its Assumptions when they differ from their
// default (verdict rules that read one show it beside their verdict when it is widened).
const (
	AllowancePropagation = "propagation"
	AllowanceRestart     = "restart allowance"
)

// Options tunes the oracle. Zero durations mean "not given": annotations or defaults apply.
// Scenario parameters go here and take precedence over annotations.
type Options struct {
	// Container whose probes are read; empty picks the first container with a probe.
	Container        string
	Propagation      time.Duration
	RestartAllowance time.Duration
	ReadinessLag     time.Duration
	RecoveryLag      time.Duration
	LivenessLag      time.Duration
	Withdrawal       time.Duration
	AdmittedWork     time.Duration
	Cleanup          time.Duration
	Margin           time.Duration
	// Reason is the scenario's one-line reason ("tolerance") for options that widen an allowance
	// past its default (Loosening); it is shown with them.
	Reason string
}

// Loosening names the options that widen an allowance past its default (propagation, restart
// allowance): a scenario that sets one must give a Reason.
func (o Options) Loosening() []string {
	var out []string
	if o.Propagation > DefaultPropagation {
		out = append(out, "propagation")
	}
	if o.RestartAllowance > DefaultRestartAllowance {
		out = append(out, "restart-allowance")
	}
	return out
}

// source names where a scenario option came from, with its reason when one was given.
func (o Options) source() string {
	if o.Reason != "" {
		return "scenario: " + o.Reason
	}
	return "scenario"
}

// Oracle holds every timing window derived from one pod spec.
type Oracle struct {
	Container   string            `json:"container"`
	Propagation time.Duration     `json:"propagation"`
	Liveness    *LivenessWindows  `json:"liveness,omitempty"`
	Readiness   *ReadinessWindows `json:"readiness,omitempty"`
	Startup     StartupBudget     `json:"startup"`
	Termination TerminationBudget `json:"termination"`
	// Assumptions are the app lags the target declared, each capped at one period of its probe, and
	// the propagation and restart allowance when they differ from their default, each capped at its
	// ceiling (MaxPropagation, MaxRestartAllowance).
	Assumptions []Assumption `json:"assumptions,omitempty"`
}

// LivenessWindows are a liveness probe's windows after a fault that makes it fail: Detection is
// when kubelet decides to kill; Restart adds the grace period the kill may take (preStop and
// SIGTERM handling, SIGKILL at the end for a frozen process) and the restart allowance, and is when
// the raised restartCount is observed.
type LivenessWindows struct {
	Probe     ProbeTiming `json:"probe"`
	Detection Window      `json:"detection"`
	Restart   Window      `json:"restart"`
}

// ReadinessWindows are a readiness probe's windows: Detection is when the endpoint goes
// ready=false after a fault starts (probe window + propagation); Recovery is when it goes
// ready=true again after the fault is reverted.
type ReadinessWindows struct {
	Probe     ProbeTiming `json:"probe"`
	Detection Window      `json:"detection"`
	Recovery  Window      `json:"recovery"`
}

// StartupBudget is how long bootstrap may take before kubelet kills the container: F·P (+ initial
// delay) of the startup probe, or of the liveness probe when there is no startup probe.
type StartupBudget struct {
	// Source is "startupProbe", "livenessProbe" or "none" (nothing kills a slow start).
	Source    string        `json:"source"`
	Budget    time.Duration `json:"budget"`
	Unbounded bool          `json:"unbounded,omitempty"`
	Explain   string        `json:"explain"`
}

// ForPod computes the oracle from a live pod.
func ForPod(pod *corev1.Pod, opts Options) (Oracle, error) {
	if pod == nil {
		return Oracle{}, fmt.Errorf("compute timing oracle: no pod")
	}
	o, err := Compute(pod.Spec, pod.Annotations, opts)
	if err != nil {
		return Oracle{}, fmt.Errorf("compute timing oracle for pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return o, nil
}

// ForTemplate computes the oracle from a Deployment's pod template.
func ForTemplate(t corev1.PodTemplateSpec, opts Options) (Oracle, error) {
	return Compute(t.Spec, t.Annotations, opts)
}

// Compute derives the oracle from a pod spec and its annotations.
func Compute(spec corev1.PodSpec, annotations map[string]string, opts Options) (Oracle, error) {
	c, err := pickContainer(spec, opts.Container)
	if err != nil {
		return Oracle{}, err
	}
	if err := opts.validate(); err != nil {
		return Oracle{}, err
	}
	ann := func(key string) (valueSource, error) {
		v, ok := annotations[key]
		if !ok {
			return valueSource{}, nil
		}
		d, err := parseSeconds(v)
		if err != nil {
			return valueSource{}, fmt.Errorf("annotation %s=%q: %w", key, v, err)
		}
		return valueSource{d: d, src: "annotation " + key}, nil
	}
	pick := func(opt time.Duration, key string, fallback valueSource) (valueSource, error) {
		if opt > 0 {
			return valueSource{d: opt, src: opts.source()}, nil
		}
		v, err := ann(key)
		if err != nil || v.src != "" {
			return v, err
		}
		return fallback, nil
	}

	prop, err := pick(opts.Propagation, AnnotationPropagation, valueSource{DefaultPropagation, "default"})
	if err != nil {
		return Oracle{}, err
	}
	propUsed, propAssumed := capAllowance(AllowancePropagation, prop, DefaultPropagation, MaxPropagation)
	restart := valueSource{DefaultRestartAllowance, "default"}
	if opts.RestartAllowance > 0 {
		restart = valueSource{opts.RestartAllowance, opts.source()}
	}
	restartAllowance, restartAssumed := capAllowance(AllowanceRestart, restart, DefaultRestartAllowance, MaxRestartAllowance)
	grace := DefaultGracePeriod
	if spec.TerminationGracePeriodSeconds != nil {
		grace = seconds(*spec.TerminationGracePeriodSeconds)
	}

	var lags [3]valueSource
	for i, l := range []struct {
		opt time.Duration
		key string
	}{{opts.ReadinessLag, AnnotationReadinessLag}, {opts.RecoveryLag, AnnotationRecoveryLag}, {opts.LivenessLag, AnnotationLivenessLag}} {
		if lags[i], err = pick(l.opt, l.key, valueSource{}); err != nil {
			return Oracle{}, err
		}
	}

	o := Oracle{Container: c.Name, Propagation: propUsed}
	assume := func(a *Assumption) {
		if a != nil {
			o.Assumptions = append(o.Assumptions, *a)
		}
	}
	assume(propAssumed)
	assume(restartAssumed)
	if p := NewProbeTiming(Readiness, c.ReadinessProbe); p != nil {
		lag, a := capLag("readiness app lag", lags[0], *p)
		assume(a)
		recLag, a := capLag("recovery app lag", lags[1], *p)
		assume(a)
		o.Readiness = readinessWindows(*p, propUsed, lag, recLag)
	}
	if p := NewProbeTiming(Liveness, c.LivenessProbe); p != nil {
		lag, a := capLag("liveness app lag", lags[2], *p)
		assume(a)
		o.Liveness = livenessWindows(*p, grace, restartAllowance, lag)
	}
	o.Startup = startupBudget(NewProbeTiming(Startup, c.StartupProbe), NewProbeTiming(Liveness, c.LivenessProbe))

	preStop := valueSource{src: "none"}
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
		preStop = valueSource{d: seconds(c.Lifecycle.PreStop.Sleep.Seconds), src: "preStop sleep"}
	}
	withdrawal, err := pick(opts.Withdrawal, AnnotationWithdrawal, preStop)
	if err != nil {
		return Oracle{}, err
	}
	work, err := pick(opts.AdmittedWork, AnnotationDrain, valueSource{src: "none stated"})
	if err != nil {
		return Oracle{}, err
	}
	cleanup, err := pick(opts.Cleanup, AnnotationCleanup, valueSource{src: "none stated"})
	if err != nil {
		return Oracle{}, err
	}
	margin := opts.Margin
	if margin == 0 {
		margin = DefaultMargin
	}
	o.Termination = newTerminationBudget(grace, withdrawal, work, cleanup, margin)
	return o, nil
}

func readinessWindows(p ProbeTiming, prop, lag, recLag time.Duration) *ReadinessWindows {
	dmin, dmax := p.Detection()
	rmin, rmax := p.Recovery()
	dmax += lag
	rmax += recLag
	return &ReadinessWindows{
		Probe: p,
		Detection: Window{Min: dmin, Max: dmax, AppLag: lag, Allowance: prop, AllowanceNote: "propagation",
			Explain: fmt.Sprintf("readiness: %s%s → fails in [%s, %s] after the fault starts, + %s propagation → endpoint ready=false by %s",
				p.Summary(), lagWords(lag), dmin, dmax, prop, dmax+prop)},
		Recovery: Window{Min: rmin, Max: rmax, AppLag: recLag, Allowance: prop, AllowanceNote: "propagation",
			Explain: fmt.Sprintf("readiness recovery: S=%d × P=%s, timeout %s%s → passes in [%s, %s] after the fault is reverted, + %s propagation → endpoint ready=true by %s",
				p.SuccessThreshold, p.Period, p.Timeout, lagWords(recLag), rmin, rmax, prop, rmax+prop)},
	}
}

func livenessWindows(p ProbeTiming, podGrace, restart, lag time.Duration) *LivenessWindows {
	dmin, dmax := p.Detection()
	dmax += lag
	grace, graceSrc := podGrace, "pod grace"
	if p.TerminationGracePeriod != nil {
		grace, graceSrc = *p.TerminationGracePeriod, "probe grace"
	}
	kill := grace + restart
	return &LivenessWindows{
		Probe: p,
		Detection: Window{Min: dmin, Max: dmax, AppLag: lag,
			Explain: fmt.Sprintf("liveness: %s%s → kubelet kills in [%s, %s] after the fault starts", p.Summary(), lagWords(lag), dmin, dmax)},
		Restart: Window{Min: dmin, Max: dmax, AppLag: lag, Allowance: kill, AllowanceNote: "kill + restart",
			Explain: fmt.Sprintf("liveness restart: %s%s → kill in [%s, %s], + ≤%s %s for the kill + %s restart → restart observed by %s",
				p.Summary(), lagWords(lag), dmin, dmax, grace, graceSrc, restart, dmax+kill)},
	}
}

// lagWords is ", app lag 1.5s" or "".
func lagWords(lag time.Duration) string {
	if lag == 0 {
		return ""
	}
	return ", app lag " + lag.String()
}

func startupBudget(startup, liveness *ProbeTiming) StartupBudget {
	budget := func(p *ProbeTiming) time.Duration {
		return p.InitialDelay + time.Duration(p.FailureThreshold)*p.Period
	}
	switch {
	case startup != nil:
		b := budget(startup)
		return StartupBudget{Source: "startupProbe", Budget: b,
			Explain: fmt.Sprintf("startup: initialDelay %s + F=%d × P=%s → bootstrap may take up to %s before a startup kill",
				startup.InitialDelay, startup.FailureThreshold, startup.Period, b)}
	case liveness != nil:
		b := budget(liveness)
		return StartupBudget{Source: "livenessProbe", Budget: b,
			Explain: fmt.Sprintf("startup: no startup probe; liveness initialDelay %s + F=%d × P=%s → bootstrap may take up to %s before a liveness kill",
				liveness.InitialDelay, liveness.FailureThreshold, liveness.Period, b)}
	}
	return StartupBudget{Source: "none", Unbounded: true,
		Explain: "startup: no startup or liveness probe → nothing kills a slow bootstrap"}
}

// Lines is every window's explanation, one per line, for reports.
func (o Oracle) Lines() []string {
	var out []string
	if o.Readiness != nil {
		out = append(out, o.Readiness.Detection.Explain, o.Readiness.Recovery.Explain)
	}
	if o.Liveness != nil {
		out = append(out, o.Liveness.Detection.Explain, o.Liveness.Restart.Explain)
	}
	out = append(out, o.Startup.Explain, o.Termination.Explain)
	for _, a := range o.Assumptions {
		out = append(out, a.Explain)
	}
	return out
}

func pickContainer(spec corev1.PodSpec, name string) (corev1.Container, error) {
	if len(spec.Containers) == 0 {
		return corev1.Container{}, fmt.Errorf("pod spec has no containers")
	}
	if name != "" {
		for _, c := range spec.Containers {
			if c.Name == name {
				return c, nil
			}
		}
		names := make([]string, 0, len(spec.Containers))
		for _, c := range spec.Containers {
			names = append(names, c.Name)
		}
		return corev1.Container{}, fmt.Errorf("container %q not in pod spec (have %s)", name, strings.Join(names, ", "))
	}
	for _, c := range spec.Containers {
		if c.LivenessProbe != nil || c.ReadinessProbe != nil || c.StartupProbe != nil {
			return c, nil
		}
	}
	return spec.Containers[0], nil
}

func (o Options) validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"propagation", o.Propagation}, {"restart allowance", o.RestartAllowance}, {"withdrawal", o.Withdrawal},
		{"readiness lag", o.ReadinessLag}, {"recovery lag", o.RecoveryLag}, {"liveness lag", o.LivenessLag},
		{"admitted work", o.AdmittedWork}, {"cleanup", o.Cleanup}, {"margin", o.Margin},
	} {
		if f.d < 0 {
			return fmt.Errorf("oracle option %s is negative (%s)", f.name, f.d)
		}
	}
	return nil
}

// ErrNegativeDuration is ParseSeconds' error for a duration below zero.
var ErrNegativeDuration = errors.New("negative duration")

// ParseSeconds reads "5", "2.5" (seconds) or a Go duration ("1500ms"): the one parser of the timing
// values that oracle options, probegate.dev/ annotations, verdict rule parameters and lint read. A
// negative duration is ErrNegativeDuration; any other error is time.ParseDuration's.
func ParseSeconds(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 {
			return 0, ErrNegativeDuration
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, ErrNegativeDuration
	}
	return d, nil
}

// parseSeconds is ParseSeconds saying what the oracle's values look like when s is not one.
func parseSeconds(s string) (time.Duration, error) {
	d, err := ParseSeconds(s)
	if err != nil && !errors.Is(err, ErrNegativeDuration) {
		return 0, errors.New(`want seconds ("5", "2.5") or a duration ("1500ms")`)
	}
	return d, err
}
