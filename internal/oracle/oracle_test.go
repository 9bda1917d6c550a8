package oracle

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const s = time.Second

func httpProbe(path string, period, timeout, failure, success int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(8080)}},
		PeriodSeconds:    period,
		TimeoutSeconds:   timeout,
		FailureThreshold: failure,
		SuccessThreshold: success,
	}
}

func int64p(v int64) *int64 { return &v }

func TestReadinessWindows(t *testing.T) {
	tests := []struct {
		name          string
		probe         *corev1.Probe
		opts          Options
		ann           map[string]string
		min, max, dl  time.Duration
		recMin, recDl time.Duration
		explain       string
	}{
		{
			name:  "api defaults for zero fields",
			probe: httpProbe("/ready", 0, 0, 0, 0),
			min:   20 * s, max: 31 * s, dl: 33 * s,
			recMin: 0, recDl: 13 * s,
			explain: "F=3 × P=10s, timeout 1s",
		},
		{
			name:  "fast readiness",
			probe: httpProbe("/ready", 1, 1, 2, 1),
			min:   1 * s, max: 3 * s, dl: 5 * s,
			recMin: 0, recDl: 4 * s,
			explain: "readiness: F=2 × P=1s, timeout 1s → fails in [1s, 3s] after the fault starts, + 2s propagation → endpoint ready=false by 5s",
		},
		{
			name:  "success threshold and scenario propagation",
			probe: httpProbe("/ready", 2, 1, 3, 3),
			opts:  Options{Propagation: 500 * time.Millisecond},
			min:   4 * s, max: 7 * s, dl: 7500 * time.Millisecond,
			recMin: 4 * s, recDl: 7500 * time.Millisecond,
			explain: "+ 500ms propagation",
		},
		{
			name:  "propagation from annotation",
			probe: httpProbe("/ready", 1, 1, 1, 1),
			ann:   map[string]string{AnnotationPropagation: "1.5"},
			min:   0, max: 2 * s, dl: 3500 * time.Millisecond,
			recMin: 0, recDl: 3500 * time.Millisecond,
			explain: "+ 1.5s propagation",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", ReadinessProbe: tc.probe}}}
			o, err := Compute(spec, tc.ann, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if o.Readiness == nil {
				t.Fatal("no readiness windows")
			}
			d := o.Readiness.Detection
			if d.Min != tc.min || d.Max != tc.max || d.Deadline() != tc.dl {
				t.Errorf("detection = [%s, %s] deadline %s, want [%s, %s] deadline %s", d.Min, d.Max, d.Deadline(), tc.min, tc.max, tc.dl)
			}
			r := o.Readiness.Recovery
			if r.Min != tc.recMin || r.Deadline() != tc.recDl {
				t.Errorf("recovery = min %s deadline %s, want %s, %s", r.Min, r.Deadline(), tc.recMin, tc.recDl)
			}
			if !strings.Contains(d.Explain, tc.explain) {
				t.Errorf("explain %q does not contain %q", d.Explain, tc.explain)
			}
			if o.Liveness != nil {
				t.Error("liveness windows without a liveness probe")
			}
		})
	}
}

func TestLivenessRestartWindow(t *testing.T) {
	p := httpProbe("/live", 2, 1, 2, 1)
	spec := corev1.PodSpec{TerminationGracePeriodSeconds: int64p(5), Containers: []corev1.Container{{Name: "app", LivenessProbe: p}}}
	o, err := Compute(spec, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := o.Liveness
	if l.Detection.Min != 2*s || l.Detection.Max != 5*s || l.Detection.Allowance != 0 {
		t.Errorf("detection = %s", l.Detection)
	}
	// kill may take the whole 5 s grace, then 2 s for the restart to show.
	if l.Restart.Deadline() != 12*s {
		t.Errorf("restart deadline = %s, want 12s", l.Restart.Deadline())
	}
	if !l.Restart.Contains(12*s) || l.Restart.Contains(12*s+time.Millisecond) || l.Restart.Contains(time.Second) {
		t.Errorf("Contains boundaries wrong for %s", l.Restart)
	}

	// A probe-level grace overrides the pod's for liveness kills.
	p.TerminationGracePeriodSeconds = int64p(1)
	o, err = Compute(spec, nil, Options{RestartAllowance: 3 * s})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Liveness.Restart.Deadline(); got != 9*s {
		t.Errorf("restart deadline with probe grace 1s = %s, want 9s", got)
	}
	if !strings.Contains(o.Liveness.Restart.Explain, "probe grace") {
		t.Errorf("explain %q does not name the probe grace", o.Liveness.Restart.Explain)
	}
}

func TestStartupBudget(t *testing.T) {
	startup := httpProbe("/startup", 5, 2, 36, 1)
	live := httpProbe("/live", 10, 1, 3, 1)
	live.InitialDelaySeconds = 4
	tests := []struct {
		name      string
		c         corev1.Container
		source    string
		budget    time.Duration
		unbounded bool
	}{
		{"startup probe", corev1.Container{Name: "a", StartupProbe: startup, LivenessProbe: live}, "startupProbe", 180 * s, false},
		{"liveness only", corev1.Container{Name: "a", LivenessProbe: live}, "livenessProbe", 34 * s, false},
		{"none", corev1.Container{Name: "a", ReadinessProbe: httpProbe("/ready", 1, 1, 1, 1)}, "none", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Compute(corev1.PodSpec{Containers: []corev1.Container{tc.c}}, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if o.Startup.Source != tc.source || o.Startup.Budget != tc.budget || o.Startup.Unbounded != tc.unbounded {
				t.Errorf("startup = %+v, want %s %s unbounded=%v", o.Startup, tc.source, tc.budget, tc.unbounded)
			}
		})
	}
}

func TestTerminationBudget(t *testing.T) {
	base := func(grace int64, preStop int64) corev1.PodSpec {
		c := corev1.Container{Name: "app", ReadinessProbe: httpProbe("/ready", 1, 1, 1, 1)}
		if preStop > 0 {
			c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: preStop}}}
		}
		spec := corev1.PodSpec{Containers: []corev1.Container{c}}
		if grace >= 0 {
			spec.TerminationGracePeriodSeconds = int64p(grace)
		}
		return spec
	}
	tests := []struct {
		name           string
		spec           corev1.PodSpec
		ann            map[string]string
		opts           Options
		grace          time.Duration
		required       time.Duration
		fits           bool
		withdrawalFrom string
	}{
		{"defaults", base(-1, 0), nil, Options{}, 30 * s, 2 * s, true, "none"},
		{"preStop sleep and drain annotation", base(20, 5),
			map[string]string{AnnotationDrain: "10", AnnotationCleanup: "500ms"}, Options{},
			20 * s, 17500 * time.Millisecond, true, "preStop sleep"},
		{"annotation beats preStop; does not fit", base(10, 5),
			map[string]string{AnnotationWithdrawal: "3", AnnotationDrain: "8"}, Options{},
			10 * s, 13 * s, false, "annotation " + AnnotationWithdrawal},
		{"scenario beats annotation", base(10, 5),
			map[string]string{AnnotationWithdrawal: "3", AnnotationDrain: "8"}, Options{Withdrawal: 1 * s, AdmittedWork: 2 * s, Margin: 1 * s},
			10 * s, 4 * s, true, "scenario"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Compute(tc.spec, tc.ann, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			b := o.Termination
			if b.GracePeriod != tc.grace || b.Required != tc.required || b.Fits != tc.fits || b.WithdrawalSource != tc.withdrawalFrom {
				t.Errorf("termination = %+v\nwant grace %s required %s fits %v withdrawal from %q", b, tc.grace, tc.required, tc.fits, tc.withdrawalFrom)
			}
			if !strings.Contains(b.Explain, "grace "+tc.grace.String()) {
				t.Errorf("explain %q does not state the grace", b.Explain)
			}
		})
	}
}

func TestComputeErrors(t *testing.T) {
	ok := corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}
	tests := []struct {
		name string
		spec corev1.PodSpec
		ann  map[string]string
		opts Options
		want string
	}{
		{"no containers", corev1.PodSpec{}, nil, Options{}, "no containers"},
		{"unknown container", ok, nil, Options{Container: "web"}, `container "web" not in pod spec (have app)`},
		{"bad annotation", ok, map[string]string{AnnotationDrain: "ten"}, Options{}, AnnotationDrain},
		{"negative annotation", ok, map[string]string{AnnotationCleanup: "-1"}, Options{}, "negative"},
		{"negative option", ok, nil, Options{Margin: -s}, "margin is negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compute(tc.spec, tc.ann, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestForPodPicksProbedContainerAndRoundTrips(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "target-0", Namespace: "ns", Annotations: map[string]string{AnnotationDrain: "4"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "sidecar"},
			{Name: "app", ReadinessProbe: httpProbe("/ready", 1, 1, 2, 1), LivenessProbe: httpProbe("/live", 2, 1, 2, 1)},
		}},
	}
	o, err := ForPod(pod, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Container != "app" {
		t.Errorf("container = %q, want app (the one with probes)", o.Container)
	}
	if o.Readiness.Probe.Handler != "http GET :8080/ready" {
		t.Errorf("handler = %q", o.Readiness.Probe.Handler)
	}
	if len(o.Lines()) != 6 {
		t.Errorf("Lines() = %d lines, want 6: %q", len(o.Lines()), o.Lines())
	}
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var back Oracle
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Readiness.Detection != o.Readiness.Detection || back.Termination != o.Termination || back.Liveness.Restart != o.Liveness.Restart {
		t.Errorf("JSON round trip changed the oracle:\n%s", data)
	}
	if _, err := ForPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"}}, Options{}); err == nil || !strings.Contains(err.Error(), "ns/x") {
		t.Errorf("ForPod error = %v, want it to name the pod", err)
	}
}

func TestAppLagsWidenWindows(t *testing.T) {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app",
		ReadinessProbe: httpProbe("/ready", 1, 1, 2, 1), LivenessProbe: httpProbe("/live", 5, 1, 3, 1)}}}
	ann := map[string]string{AnnotationReadinessLag: "1.5", AnnotationRecoveryLag: "750ms", AnnotationLivenessLag: "3"}
	o, err := Compute(spec, ann, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The declared 1.5 s readiness lag exceeds the 1 s readiness period: the window uses 1 s.
	if d := o.Readiness.Detection; d.Min != 1*s || d.Max != 4*s || d.Deadline() != 6*s || d.AppLag != 1*s {
		t.Errorf("readiness detection = %+v", d)
	}
	if r := o.Readiness.Recovery; r.Deadline() != 4750*time.Millisecond {
		t.Errorf("recovery deadline = %s, want 4.75s", r.Deadline())
	}
	if l := o.Liveness.Detection; l.Min != 10*s || l.Max != 19*s {
		t.Errorf("liveness detection = %s, want [10s, 19s]", l)
	}
	if !strings.Contains(o.Readiness.Detection.Explain, "app lag 1s") {
		t.Errorf("explain %q does not name the lag", o.Readiness.Detection.Explain)
	}
	if len(o.Assumptions) != 3 {
		t.Fatalf("assumptions = %+v, want the three declared lags", o.Assumptions)
	}
	if a := o.Assumptions[0]; !a.Capped() || a.Declared != 1500*time.Millisecond || a.Used != 1*s ||
		!strings.Contains(a.Explain, "capped at one readiness period") || !strings.Contains(a.Explain, AnnotationReadinessLag) {
		t.Errorf("readiness lag assumption = %+v, want 1.5s declared by the annotation, capped at 1s", a)
	}
	if a := o.Assumptions[2]; a.Capped() || a.Used != 3*s || a.Cap != 5*s {
		t.Errorf("liveness lag assumption = %+v, want 3s used, within the 5s period", a)
	}
	if lines := strings.Join(o.Lines(), "\n"); !strings.Contains(lines, "assumption: readiness app lag 1.5s") {
		t.Errorf("Lines() does not show the declared assumption:\n%s", lines)
	}
	// A scenario option overrides the annotation.
	o, err = Compute(spec, ann, Options{ReadinessLag: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if o.Readiness.Detection.Max != 3500*time.Millisecond {
		t.Errorf("readiness max with option = %s, want 3.5s", o.Readiness.Detection.Max)
	}
}
