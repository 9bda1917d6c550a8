package faults

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/probegate/probegate/internal/timeline"
)

// signals is a NodeProcs that records the signals sent, each container's pid being 100 + its
// number of characters (any stable value).
type signals struct {
	mu   sync.Mutex
	sent []string
}

func (s *signals) ContainerPID(_ context.Context, node, id string) (int, error) {
	return 100 + len(id), nil
}
func (s *signals) ContainerPIDs(_ context.Context, node, id string) ([]int, error) {
	return []int{100 + len(id)}, nil
}
func (s *signals) Signal(_ context.Context, node string, pid int, sig string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, sig)
	return nil
}
func (s *signals) State(context.Context, string, int) (string, error) { return "T (stopped)", nil }
func (s *signals) Via(node string) string                             { return "test " + node }
func (s *signals) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sent...)
}

func TestStoppedStartMarksTheTemplateAndRestores(t *testing.T) {
	s := &stoppedStart{hold: 25 * time.Second, baseline: 13 * time.Second}
	ctr := &corev1.Container{Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}
	if was, changed := s.apply(ctr); !changed || was != "not stopped at start" || !s.carries(*ctr) {
		t.Fatalf("apply = %q %v, carries %v", was, changed, s.carries(*ctr))
	}
	if shows, basis := s.shows(); shows != 15*time.Second || !strings.Contains(basis, "13s + 2s") {
		t.Errorf("shows = %s (%s), want 15s against the slowest boot before the fault", shows, basis)
	}
	s.restore(ctr)
	if s.carries(*ctr) || len(ctr.Env) != 1 {
		t.Errorf("restore left %v", ctr.Env)
	}
}

// TestHoldStoppedStopsNewContainersAndResumesThem: a new pod carrying the marker is stopped once
// its container runs and resumed after the hold; an old pod, and a new one without the marker,
// are left alone; a pod still stopped when the cold start ends is resumed then.
func TestHoldStoppedStopsNewContainersAndResumesThem(t *testing.T) {
	defer func(p time.Duration) { stopPoll = p }(stopPoll)
	stopPoll = 10 * time.Millisecond
	cs := fakeTarget()
	tl := timeline.New(time.Now())
	procs := &signals{}
	c := NewColdStart(Recorder{Timeline: tl}, cs, "ns", deploymentWorkload(cs, "ns", "target"), "target", 300*time.Millisecond)
	s := &stoppedStart{hold: 300 * time.Millisecond, baseline: -1, procs: procs}
	newPod := func(name string, marked bool) {
		p := targetPod(name, false, true)
		p.UID = types.UID("uid-new-" + name)
		p.Status.ContainerStatuses[0].State.Running.StartedAt = metav1.NewTime(time.Now())
		if marked {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: ColdStartMarker, Value: s.hold.String()}}
		}
		if _, err := cs.CoreV1().Pods("ns").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	old := map[string]bool{}
	pods, _ := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	for _, p := range pods.Items {
		old[string(p.UID)] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.holdStopped(ctx, s, old); close(done) }()
	newPod("target-n1", true)
	newPod("target-plain", false)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && len(procs.got()) < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	if got := procs.got(); strings.Join(got, ",") != "STOP,CONT" {
		t.Fatalf("signals after the hold = %v, want STOP then CONT for the one marked new pod", got)
	}
	newPod("target-n2", true)
	for time.Now().Before(deadline) && len(procs.got()) < 3 {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if got := procs.got(); strings.Join(got, ",") != "STOP,CONT,STOP,CONT" {
		t.Fatalf("signals = %v: the pod stopped when the cold start ended must be resumed", got)
	}
	var marks []string
	for _, e := range tl.Filter(timeline.KindMark) {
		marks = append(marks, e.Mark.Name+": "+e.Mark.Detail)
	}
	joined := strings.Join(marks, "\n")
	if !strings.Contains(joined, "target-n1's container stopped (SIGSTOP") || !strings.Contains(joined, "(held 300ms)") ||
		!strings.Contains(joined, "target-n2's container resumed") || !strings.Contains(joined, "(the cold start ended)") {
		t.Errorf("marks:\n%s", joined)
	}
	if strings.Contains(joined, "target-plain") {
		t.Errorf("a new pod without the marker was acted on:\n%s", joined)
	}
}

// A new pod already ready when first seen (a boot faster than the poll) is not stopped: that
// would freeze a pod in rotation.
func TestHoldStoppedLeavesAReadyPodAlone(t *testing.T) {
	defer func(p time.Duration) { stopPoll = p }(stopPoll)
	stopPoll = 10 * time.Millisecond
	cs := fakeTarget()
	tl := timeline.New(time.Now())
	procs := &signals{}
	c := NewColdStart(Recorder{Timeline: tl}, cs, "ns", deploymentWorkload(cs, "ns", "target"), "target", time.Second)
	s := &stoppedStart{hold: time.Second, baseline: -1, procs: procs}
	p := targetPod("target-fast", true, true)
	p.UID = types.UID("uid-fast")
	p.Status.ContainerStatuses[0].State.Running.StartedAt = metav1.NewTime(time.Now().Add(-time.Second))
	p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Now())
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: ColdStartMarker, Value: s.hold.String()}}
	if _, err := cs.CoreV1().Pods("ns").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	c.holdStopped(ctx, s, map[string]bool{"": true})
	if got := procs.got(); len(got) != 0 {
		t.Fatalf("signals = %v: a ready pod was stopped", got)
	}
	marks := tl.Filter(timeline.KindMark)
	found := false
	for _, m := range marks {
		found = found || strings.Contains(m.Mark.Detail, "target-fast was ready 1s after its container started, before it could be stopped: not stopped")
	}
	if !found {
		t.Errorf("no mark says why target-fast was not stopped: %+v", marks)
	}
}

// Both slowings: the template carries the CPU limit and the marker; restore takes both away.
func TestThrottledStopAppliesBoth(t *testing.T) {
	b := &throttledStop{cpu: &cpuStart{limit: resource.MustParse("20m"), hold: 25 * time.Second, baseline: 12 * time.Second},
		stop: &stoppedStart{hold: 25 * time.Second, baseline: 12 * time.Second}}
	ctr := &corev1.Container{}
	if _, changed := b.apply(ctr); !changed || !b.carries(*ctr) || !b.cpu.carries(*ctr) || !b.stop.carries(*ctr) {
		t.Fatalf("apply: changed %v, carries %v", changed, b.carries(*ctr))
	}
	if b.setting() != "CPU limit 20m for the first 25s, container stopped (SIGSTOP) for its first 25s" {
		t.Errorf("setting = %q", b.setting())
	}
	if p := b.params(); p["cpu"] != "20m" || p["stop"] != "25s" {
		t.Errorf("params = %v", p)
	}
	// The limit is lifted in place after the hold: the pod is still one of the new ones.
	lifted := ctr.DeepCopy()
	lifted.Resources.Limits[corev1.ResourceCPU] = unthrottled
	if !b.carries(*lifted) {
		t.Error("a new pod whose limit was lifted no longer counts as new: its boot is never judged")
	}
	b.restore(ctr)
	if b.cpu.carries(*ctr) || b.stop.carries(*ctr) || len(ctr.Env) != 0 {
		t.Errorf("restore left %+v", ctr)
	}
}
