package runner

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/probegate/probegate/internal/scenario"
)

func probedPod(readiness *corev1.Probe) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", ReadinessProbe: readiness,
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/live", Port: intstr.FromInt32(8080)}},
			PeriodSeconds: 5, TimeoutSeconds: 1, FailureThreshold: 3},
	}}}}
}

// A fault held until readiness has withdrawn the pod lasts the pod's own worst withdrawal
// (F × P + timeout + propagation) plus the file's margin, and the load grows to cover it; without
// a readiness probe, or past what a load may grow to, it is skipped with the reason.
func TestHoldUntilReadinessWithdrawn(t *testing.T) {
	sc := &scenario.Scenario{Load: scenario.Load{Duration: 60 * time.Second}}
	f := scenario.Fault{Type: "freeze", At: 5 * time.Second, Duration: 2 * time.Second, Until: scenario.UntilReadinessWithdrawn}
	ready := func(p, fail, timeout int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}},
			PeriodSeconds: p, FailureThreshold: fail, TimeoutSeconds: timeout}
	}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want time.Duration
		load time.Duration
		skip string
	}{
		// 2 × 1 s + 1 s timeout + 2 s default propagation + 2 s margin.
		{"fixture's readiness", probedPod(ready(1, 2, 1)), 7 * time.Second, 60 * time.Second, ""},
		// 3 × 5 s + 1 s + 2 s + 2 s.
		{"identical probes", probedPod(ready(5, 3, 1)), 20 * time.Second, 60 * time.Second, ""},
		{"no readiness probe", probedPod(nil), 0, 0, "no readiness probe"},
		// 3 × 20 s + 2 s + 2 s + 2 s = 66 s from 5 s, past the 60 s load: the load grows to the
		// fault's end (71 s) + the 53 s the file runs after its fault.
		{"longer than the load", probedPod(ready(20, 3, 2)), 66 * time.Second, 124 * time.Second, ""},
		// etcd's upstream readiness: 30 × 5 s + 5 s + 2 s + 2 s = 159 s; a 60 s period would be 30 min.
		{"past what a load may grow to", probedPod(ready(60, 30, 5)), 0, 0, "longer than the 5m0s"},
		{"no pod", nil, 0, 0, "no live target pod"},
	} {
		got, load, skip := holdUntil(sc, f, c.pod)
		if c.skip == "" && skip == "" && load != c.load {
			t.Errorf("%s: load %s, want %s", c.name, load, c.load)
		}
		switch {
		case c.skip != "":
			if !strings.Contains(skip, c.skip) {
				t.Errorf("%s: skip %q, want it to say %q", c.name, skip, c.skip)
			}
		case skip != "":
			t.Errorf("%s: skipped: %s", c.name, skip)
		case got.Duration != c.want:
			t.Errorf("%s: held %s, want %s", c.name, got.Duration, c.want)
		}
	}
}

// A fault sized AtLeast readiness-withdrawn keeps its file's duration on a fast-probed target and
// grows on a slow-probed one (a 10 s period), moving the later faults and the load's end with it;
// the load then also covers the recovery deadline.
func TestSizeToTarget(t *testing.T) {
	s := time.Second
	sc := &scenario.Scenario{Name: "db-outage", Load: scenario.Load{Rate: 30, Duration: 45 * s}, Faults: []scenario.Fault{
		{Type: "db-down", At: 10 * s, Duration: 20 * s, AtLeast: scenario.UntilReadinessWithdrawn},
		{Type: "pod-delete", At: 35 * s},
	}}
	ready := readyProbe
	// The fixture's readiness (2 × 1 s + 1 s + 2 s propagation = 5 s + 5 s margin < 20 s): unchanged.
	if got, notes := sizeToTarget(sc, probedPod(ready(1, 2, 1))); got != sc || notes != nil {
		t.Errorf("fast probes: sized %+v, notes %q; want the scenario as it is", got.Faults, notes)
	}
	// podinfo's (3 × 10 s + 5 s + 2 s = 37 s, + 5 s = 42 s): 22 s longer, the deletion and the load
	// move by 22 s; recovery (10 s + 5 s + 2 s = 17 s) + 5 s after the last fault (the deletion at
	// 57 s): 79 s.
	got, notes := sizeToTarget(sc, probedPod(ready(10, 3, 5)))
	if got == sc || got.Faults[0].Duration != 42*s || got.Faults[1].At != 57*s || got.Load.Duration != 79*s {
		t.Fatalf("10 s probes: faults %+v, load %s; want db-down 42s, pod-delete at 57s, load 79s", got.Faults, got.Load.Duration)
	}
	if sc.Faults[0].Duration != 20*s || sc.Load.Duration != 45*s {
		t.Errorf("the catalogue's scenario was changed: %+v", sc)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "faults[0] db-down lasts 42s, not 20s: at least until readiness has withdrawn the pod at worst (37s after it starts) + 5s") ||
		!strings.Contains(notes[1], "the load runs 1m19s, not 45s") {
		t.Errorf("notes = %q", notes)
	}
	// No readiness probe: the file's durations stand, saying why.
	if got, notes := sizeToTarget(sc, probedPod(nil)); got != sc || len(notes) != 1 || !strings.Contains(notes[0], "no readiness probe") {
		t.Errorf("no readiness: %v, %q", got == sc, notes)
	}
}

// TestCoverSpans: the load covers a cold start's rollout on this target, one pod at a time
// (2 s step + the bootstrap + the readiness recovery deadline each), plus the margin.
func TestCoverSpans(t *testing.T) {
	s := time.Second
	sc := &scenario.Scenario{Name: "cold-start", Target: scenario.Target{Replicas: 2}, Load: scenario.Load{Rate: 30, Duration: 75 * s},
		Faults: []scenario.Fault{{Type: "cold-start", At: 5 * s, Params: map[string]string{"bootstrap": "25s"}}}}
	ready := func(p, timeout int32) *corev1.Probe { return readyProbe(p, 3, timeout) }
	// The fixture's probes (recovery 1 s + 1 s + 2 s propagation): 2 × (2 + 25 + 4) + 5 + 5 = 72 s ≤ 75 s.
	if got, notes := coverSpans(sc, probedPod(ready(1, 1))); got != sc || notes != nil {
		t.Errorf("fast probes: load %s, notes %q; want the scenario as it is", got.Load.Duration, notes)
	}
	// podinfo's (10 s + 5 s + 2 s = 17 s): 2 × (2 + 25 + 17) + 5 + 5 = 98 s.
	got, notes := coverSpans(sc, probedPod(ready(10, 5)))
	if got == sc || got.Load.Duration != 98*s || len(notes) != 1 || !strings.Contains(notes[0], "the load runs 1m38s, not 1m15s: faults[0] cold-start acts for up to 1m28s on this target (2 pods") {
		t.Fatalf("10 s probes: load %s, notes %q; want 1m38s", got.Load.Duration, notes)
	}
	if sc.Load.Duration != 75*s {
		t.Errorf("the catalogue's scenario was changed: %s", sc.Load.Duration)
	}
	// A fault with no span (a deletion) changes nothing.
	del := &scenario.Scenario{Name: "d", Target: scenario.Target{Replicas: 3}, Load: scenario.Load{Duration: 40 * s}, Faults: []scenario.Fault{{Type: "pod-delete", At: 5 * s}}}
	if got, _ := coverSpans(del, probedPod(ready(10, 5))); got != del {
		t.Errorf("pod-delete: load %s, want unchanged", got.Load.Duration)
	}
}

// process-freeze's load (75 s) covers the bundled app's recovery after the freeze (65 s + 4 s + 5 s)
// but not podinfo's (65 s + 17 s + 5 s = 87 s).
func TestCoverRecovery(t *testing.T) {
	s := time.Second
	sc := &scenario.Scenario{Name: "process-freeze", Load: scenario.Load{Rate: 30, Duration: 75 * s},
		Faults: []scenario.Fault{{Type: "freeze", At: 5 * s, Duration: 60 * s}},
		Expect: []scenario.Expectation{{Rule: "recovery-within"}}}
	ready := func(p, timeout int32) *corev1.Probe { return readyProbe(p, 2, timeout) }
	if got, notes := coverRecovery(sc, probedPod(ready(1, 1))); got != sc || notes != nil {
		t.Errorf("fast probes: load %s, notes %q; want the scenario as it is", got.Load.Duration, notes)
	}
	got, notes := coverRecovery(sc, probedPod(ready(10, 5)))
	if got == sc || got.Load.Duration != 87*s || len(notes) != 1 ||
		!strings.Contains(notes[0], "the load runs 1m27s, not 1m15s: faults[0] freeze ends at 1m5s, then recovery is due within 17s") {
		t.Fatalf("10 s probes: load %s, notes %q; want 1m27s", got.Load.Duration, notes)
	}
	if sc.Load.Duration != 75*s {
		t.Errorf("the catalogue's scenario was changed: %s", sc.Load.Duration)
	}
	// Nothing judges recovery, or the only fault is one-shot: the load stands.
	noRecovery := *sc
	noRecovery.Expect = []scenario.Expectation{{Rule: "no-liveness-restarts"}}
	oneShot := *sc
	oneShot.Faults = []scenario.Fault{{Type: "pod-delete", At: 70 * s}}
	for name, c := range map[string]*scenario.Scenario{"no recovery-within": &noRecovery, "one-shot": &oneShot} {
		if got, notes := coverRecovery(c, probedPod(ready(10, 5))); got != c || notes != nil {
			t.Errorf("%s: load %s, notes %q", name, got.Load.Duration, notes)
		}
	}
}

// readyProbe is an HTTP readiness probe with period p, failure threshold fail and timeout seconds.
func readyProbe(p, fail, timeout int32) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: p, FailureThreshold: fail, TimeoutSeconds: timeout, SuccessThreshold: 1}
}
