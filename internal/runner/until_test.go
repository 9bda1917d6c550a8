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
// (F × P + timeout + propagation) plus the file's margin; without a readiness probe, or past the
// load's end, it is skipped with the reason.
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
		skip string
	}{
		// 2 × 1 s + 1 s timeout + 2 s default propagation + 2 s margin.
		{"fixture's readiness", probedPod(ready(1, 2, 1)), 7 * time.Second, ""},
		// 3 × 5 s + 1 s + 2 s + 2 s.
		{"identical probes", probedPod(ready(5, 3, 1)), 20 * time.Second, ""},
		{"no readiness probe", probedPod(nil), 0, "no readiness probe"},
		// 3 × 20 s + 2 s + 2 s + 2 s = 66 s from 5 s: past the 60 s load.
		{"longer than the load", probedPod(ready(20, 3, 2)), 0, "after the load ends"},
		{"no pod", nil, 0, "no live target pod"},
	} {
		got, skip := holdUntil(sc, f, c.pod)
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
