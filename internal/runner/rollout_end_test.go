package runner

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/probegate/probegate/internal/scenario"
)

// rolloutPod is a target pod with readiness P=1s F=2 timeout 1s and, when startupF > 0, a startup
// probe of startupF × 1s; created at 0 and ready boot later (no Ready condition when boot is 0).
func rolloutPod(startupF int32, boot time.Duration) *corev1.Pod {
	get := corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}
	c := corev1.Container{Name: "app",
		ReadinessProbe: &corev1.Probe{ProbeHandler: get, PeriodSeconds: 1, FailureThreshold: 2, TimeoutSeconds: 1, SuccessThreshold: 1}}
	if startupF > 0 {
		c.StartupProbe = &corev1.Probe{ProbeHandler: get, PeriodSeconds: 1, FailureThreshold: startupF, TimeoutSeconds: 1, SuccessThreshold: 1}
	}
	created := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	if boot > 0 {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(created.Add(boot))}}
	}
	return p
}

// A rollout fault's load covers recovery-within's bound after the inject (plus the sizing margin),
// so a slow rollout is judged, not cut short by the fault's revert at the load's end.
func TestCoverRolloutBound(t *testing.T) {
	coldStart := func(load time.Duration) *scenario.Scenario {
		return &scenario.Scenario{Target: scenario.Target{Replicas: 2}, Load: scenario.Load{Duration: load},
			Faults: []scenario.Fault{{Type: "cold-start", At: 5 * time.Second, Params: map[string]string{"bootstrap": "25s"}}}}
	}
	for _, c := range []struct {
		name string
		sc   *scenario.Scenario
		pod  *corev1.Pod
		load time.Duration // 0: unchanged
	}{
		// bound 2 × (2s allowance + 60 × 1s startup budget + readiness recovery 1 × 1s + 1s timeout
		// + 2s propagation) = 132s, from 5s, + 5s margin.
		{"startup budget 60s", coldStart(75 * time.Second), rolloutPod(60, 0), 142 * time.Second},
		// 5 × 1s: 2 × (2 + 5 + 4) = 22s from 5s: inside the 75s load.
		{"short startup budget", coldStart(75 * time.Second), rolloutPod(5, 0), 0},
		// No startup probe and no boot seen: no bound, the load stays.
		{"no startup probe, not ready", coldStart(20 * time.Second), rolloutPod(0, 0), 0},
		// No startup probe: the live pod's boot × 1.5 + 2s stands in: 2 × (17 + 4) = 42s from 5s + 5s.
		{"no startup probe, boot 10s", coldStart(20 * time.Second), rolloutPod(0, 10*time.Second), 52 * time.Second},
		{"no rollout fault", &scenario.Scenario{Target: scenario.Target{Replicas: 2}, Load: scenario.Load{Duration: 20 * time.Second},
			Faults: []scenario.Fault{{Type: "pod-delete", At: 5 * time.Second}}}, rolloutPod(60, 0), 0},
		{"no pod", coldStart(20 * time.Second), nil, 0},
	} {
		got, minLoad, notes := coverRolloutBound(c.sc, c.pod)
		if c.load == 0 {
			if got != c.sc || minLoad != 0 || len(notes) != 0 {
				t.Errorf("%s: load %s (min %s, %q), want it unchanged", c.name, got.Load.Duration, minLoad, notes)
			}
			continue
		}
		if got.Load.Duration != c.load || minLoad != c.sc.Load.Duration || len(notes) != 1 || !strings.Contains(notes[0], "cold-start") {
			t.Errorf("%s: load %s (min %s, %q), want %s (min %s)", c.name, got.Load.Duration, minLoad, notes, c.load, c.sc.Load.Duration)
		}
		if c.sc.Load.Duration == got.Load.Duration {
			t.Errorf("%s: the scenario itself was changed", c.name)
		}
	}
}

// The load sized to a rollout's bound ends once the rollouts are complete plus the margin, never
// before the load it was sized from nor while a declared fault is still to come or acting.
func TestRolloutEndDue(t *testing.T) {
	e := rolloutEnd{min: 75 * time.Second, margin: 5 * time.Second, lastFault: 5 * time.Second}
	for _, c := range []struct {
		elapsed, completed time.Duration
		want               bool
	}{
		{80 * time.Second, 0, false},                // not complete yet
		{70 * time.Second, 50 * time.Second, false}, // complete, but before the sized-from load
		{75 * time.Second, 50 * time.Second, true},
		{76 * time.Second, 72 * time.Second, false}, // within the margin after completion
		{77 * time.Second, 72 * time.Second, true},
	} {
		if got := e.due(c.elapsed, c.completed); got != c.want {
			t.Errorf("due(%s, %s) = %v, want %v", c.elapsed, c.completed, got, c.want)
		}
	}
	late := rolloutEnd{min: 10 * time.Second, margin: 5 * time.Second, lastFault: 40 * time.Second}
	if late.due(30*time.Second, 20*time.Second) || !late.due(41*time.Second, 20*time.Second) {
		t.Error("a load must not end before its last declared fault")
	}
}
