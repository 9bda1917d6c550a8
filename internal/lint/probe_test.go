package lint

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestDetectionWindowAndBudget(t *testing.T) {
	cases := []struct {
		probe          corev1.Probe
		earliest, late time.Duration
		killAfter      time.Duration
	}{
		// API defaults: period 10s, timeout 1s, failureThreshold 3.
		{corev1.Probe{}, 20 * time.Second, 31 * time.Second, 20 * time.Second},
		{corev1.Probe{PeriodSeconds: 3, TimeoutSeconds: 2, FailureThreshold: 2}, 3 * time.Second, 8 * time.Second, 3 * time.Second},
		{corev1.Probe{InitialDelaySeconds: 5, PeriodSeconds: 2, FailureThreshold: 30}, 58 * time.Second, 61 * time.Second, 63 * time.Second},
		// The no-startup-probe fixture: killed 20 s after start.
		{corev1.Probe{InitialDelaySeconds: 10, PeriodSeconds: 5, FailureThreshold: 3}, 10 * time.Second, 16 * time.Second, 20 * time.Second},
		{corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1}, 0, 2 * time.Second, 0},
	}
	for _, c := range cases {
		tm := timingOf(&c.probe)
		w := tm.DetectionWindow()
		if w.Earliest != c.earliest || w.Latest != c.late {
			t.Errorf("%+v: window %v, want [%v, %v]", c.probe, w, c.earliest, c.late)
		}
		if got := tm.KillAfter(); got != c.killAfter {
			t.Errorf("%+v: kill after %v, want %v", c.probe, got, c.killAfter)
		}
	}
}

func TestPreStopDelay(t *testing.T) {
	exec := func(cmd ...string) *corev1.Lifecycle {
		return &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: cmd}}}
	}
	cases := []struct {
		name       string
		lc         *corev1.Lifecycle
		d          time.Duration
		has, known bool
	}{
		{"none", nil, 0, false, true},
		{"native sleep", &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 7}}}, 7 * time.Second, true, true},
		{"exec sleep", exec("sleep", "5"), 5 * time.Second, true, true},
		{"exec /bin/sleep with suffix", exec("/bin/sleep", "2m"), 2 * time.Minute, true, true},
		{"shell sleeps", exec("/bin/sh", "-c", "curl -s localhost/drain; sleep 3 && sleep 4.5"), 7500 * time.Millisecond, true, true},
		{"shell without sleep", exec("sh", "-c", "kill -TERM 1"), 0, true, false},
		{"no delay in name only", exec("sh", "-c", "nosleep 9"), 0, true, false},
		{"http hook", &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/drain", Port: intstr.FromInt32(8080)}}}, 0, true, false},
	}
	for _, c := range cases {
		d, has, known := preStopDelay(ContainerRef{Container: &corev1.Container{Lifecycle: c.lc}})
		if d != c.d || has != c.has || known != c.known {
			t.Errorf("%s: got (%v, %v, %v), want (%v, %v, %v)", c.name, d, has, known, c.d, c.has, c.known)
		}
	}
}

func TestExecShell(t *testing.T) {
	for cmd, want := range map[string]string{"/bin/sh": "sh", "bash": "bash", "/usr/bin/env": "", "sleep": ""} {
		if got := execShell([]string{cmd, "-c", "x"}); got != want {
			t.Errorf("execShell(%q) = %q, want %q", cmd, got, want)
		}
	}
	if got := execShell([]string{"/usr/bin/env", "bash", "-c", "x"}); got != "bash" {
		t.Errorf("env bash: got %q", got)
	}
	for img, want := range map[string]bool{
		"example.test/distroless/static:nonroot": true, "probegate/target:scratch": true, "app:static": true,
		"debian:bookworm": false, "scratchpad/app:1": false, "app-statics:1": false,
	} {
		if got := minimalImage.MatchString(img); got != want {
			t.Errorf("minimalImage(%q) = %v, want %v", img, got, want)
		}
	}
}

func TestDependencyCheck(t *testing.T) {
	declared := &Workload{Annotations: map[string]string{AnnotationDependencyCheckPaths: "/health/deep, /healthz/db"}}
	guessing := &Workload{Annotations: map[string]string{}}
	cases := []struct {
		w    *Workload
		path string
		want dependencyMatch
	}{
		{declared, "/healthz/db", declaredDependency},
		{declared, "/health/deep", declaredDependency},
		{declared, "/health/live", notDependency},
		{declared, "/health/database", notDependency}, // a declaration replaces guessing
		{guessing, "/health/deep", guessedDependency},
		{guessing, "/healthz/db", guessedDependency},
		{guessing, "/dbstats/ready", notDependency},
		{guessing, "/health/live", notDependency},
		{guessing, "", notDependency},
	}
	for _, c := range cases {
		if got := dependencyCheck(c.w, c.path); got != c.want {
			t.Errorf("dependencyCheck(%v, %q) = %v, want %v", c.w.Annotations, c.path, got, c.want)
		}
	}
}

func TestDeclaredDuration(t *testing.T) {
	for v, want := range map[string]time.Duration{"20": 20 * time.Second, "2.5": 2500 * time.Millisecond, "1m": time.Minute, "1500ms": 1500 * time.Millisecond} {
		d, ok, err := declared(&Workload{Annotations: map[string]string{AnnotationDrain: v}}, AnnotationDrain)
		if err != nil || !ok || d != want {
			t.Errorf("drain %q = (%v, %v, %v), want %v", v, d, ok, err, want)
		}
	}
	for _, v := range []string{"soon", "-3", ""} {
		if _, ok, err := declared(&Workload{Annotations: map[string]string{AnnotationDrain: v}}, AnnotationDrain); err == nil || !ok {
			t.Errorf("drain %q: no error", v)
		}
	}
	if _, ok, err := declared(&Workload{}, AnnotationDrain); ok || err != nil {
		t.Errorf("no annotation: ok=%v err=%v", ok, err)
	}
}

func TestSeverityParsing(t *testing.T) {
	for s, want := range map[string]Severity{"info": Info, "Warning": Warning, "error": Error, "none": SeverityNone} {
		got, err := ParseSeverity(s)
		if err != nil || got != want {
			t.Errorf("ParseSeverity(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseSeverity("fatal"); err == nil {
		t.Error("ParseSeverity(fatal): no error")
	}
}
