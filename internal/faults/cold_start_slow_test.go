package faults

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestCPUStartThrottlesAndRestores(t *testing.T) {
	c := &cpuStart{limit: resource.MustParse("20m"), hold: 25 * time.Second, baseline: 3 * time.Second}
	ctr := &corev1.Container{Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
	}}
	was, changed := c.apply(ctr)
	if !changed || was != "no CPU limit" {
		t.Fatalf("apply = %q, %v", was, changed)
	}
	if !c.carries(*ctr) {
		t.Fatal("the throttled container does not carry the throttle")
	}
	if r := ctr.Resources.Requests[corev1.ResourceCPU]; r.Cmp(resource.MustParse("20m")) >= 0 {
		t.Errorf("request %s left at or above the 20m limit (refused, or Guaranteed)", r.String())
	}
	if to := c.liftedLimit(); to.Cmp(unthrottled) != 0 {
		t.Errorf("a template with no CPU limit lifts to %s, want %s", to.String(), unthrottled.String())
	}
	c.restore(ctr)
	if _, ok := ctr.Resources.Limits[corev1.ResourceCPU]; ok || c.carries(*ctr) {
		t.Errorf("restore left a CPU limit: %v", ctr.Resources.Limits)
	}
	if r := ctr.Resources.Requests[corev1.ResourceCPU]; r.Cmp(resource.MustParse("100m")) != 0 {
		t.Errorf("restore: request %s, want 100m", r.String())
	}
	if again, changed := c.apply(&corev1.Container{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m")}}}); changed {
		t.Errorf("a template already at the throttle changed (was %q)", again)
	}
}

// Any app: the cold start shows only when a throttled pod boots at least 2 s slower than the
// slowest pod before the fault.
func TestBootProofAgainstTheRunsBaseline(t *testing.T) {
	c := &ColdStart{Bootstrap: 25 * time.Second, slow: &cpuStart{limit: resource.MustParse("20m"), hold: 25 * time.Second, baseline: 3 * time.Second}}
	created := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		ready time.Duration // after creation; the container starts 1 s after creation
		ok    bool
		words string
	}{
		{"slower than before", 9 * time.Second, true, "ready 8s after it started (slowest boot before the fault 3s + 2s): booted cold"},
		{"as fast as before", 5 * time.Second, false, "the cold start did not show"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := bootingPod("p", created, time.Second, tc.ready)
			done, ok, detail, _ := c.bootProof(p, created.Add(30*time.Second), false)
			if !done || ok != tc.ok || !strings.Contains(detail, tc.words) || !strings.Contains(detail, "CPU limit 20m for the first 25s") {
				t.Fatalf("bootProof = %v %v %q; want ok %v and %q", done, ok, detail, tc.ok, tc.words)
			}
		})
	}
	if got := slowestBoot([]corev1.Pod{*bootingPod("a", created, time.Second, 4*time.Second), *bootingPod("b", created, time.Second, 7*time.Second)}, ""); got != 6*time.Second {
		t.Errorf("slowestBoot = %s, want 6s", got)
	}
}
