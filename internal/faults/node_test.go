package faults

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/seed"
	"github.com/probegate/probegate/internal/timeline"
)

func node(name string, controlPlane bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if controlPlane {
		n.Labels[labelControlPlane] = ""
	}
	return n
}

// nodeCluster: target-a, -c, -d on kind-worker (d not ready), target-b on kind-worker2, postgres on
// kind-worker2 too, plus a control plane running one more target pod.
func nodeCluster() *fake.Clientset {
	cs := fakeTarget()
	for _, o := range []runtime.Object{node("kind-worker", false), node("kind-worker2", false), node("kind-control-plane", true)} {
		_ = cs.Tracker().Add(o)
	}
	cp := targetPod("target-z", true, true)
	cp.Spec.NodeName = "kind-control-plane"
	_ = cs.Tracker().Add(cp)
	dep := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "toxiproxy-1", Namespace: "ns", Labels: map[string]string{"app": "toxiproxy"}},
		Spec: corev1.PodSpec{NodeName: "kind-worker2"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	_ = cs.Tracker().Add(dep)
	return cs
}

func nodeChoice(cs *fake.Clientset) NodeChoice {
	return NodeChoice{Client: cs, Namespace: "ns", Selector: "app=target", Rand: seed.New(1)}
}

func TestNodeChoiceTakesTheBusiestWorker(t *testing.T) {
	cs := nodeCluster()
	got, err := nodeChoice(cs).Choose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// target-a, -c, -d run on kind-worker (target-e is pending): 3 there, 1 on kind-worker2, and the
	// control plane is never chosen.
	if got.Node != "kind-worker" || strings.Join(got.Pods, ",") != "target-a,target-c,target-d" {
		t.Errorf("chose %s with %v, want kind-worker with target-a,target-c,target-d", got.Node, got.Pods)
	}
	c := nodeChoice(cs)
	c.Node = "kind-control-plane"
	if _, err := c.Choose(context.Background()); err == nil || !strings.Contains(err.Error(), "control plane") {
		t.Errorf("named control plane: %v, want a refusal", err)
	}
}

func TestNodeChoiceAlonePassesOverNodesWithDependencies(t *testing.T) {
	cs := nodeCluster()
	c := nodeChoice(cs)
	c.Alone = true
	// fakeTarget's postgres-0 has no node: an agent pod on kind-worker shares it.
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-0", Namespace: "ns", Labels: map[string]string{"app": "agent"}},
		Spec: corev1.PodSpec{NodeName: "kind-worker"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	_ = cs.Tracker().Add(other)
	_, err := c.Choose(context.Background())
	var none *NoNodeError
	if !errors.As(err, &none) || !strings.Contains(err.Error(), "kind-worker (also runs agent-0)") ||
		!strings.Contains(err.Error(), "kind-worker2 (also runs toxiproxy-1)") {
		t.Fatalf("every worker shares its node: %v", err)
	}
	_ = cs.Tracker().Delete(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "ns", "agent-0")
	got, err := c.Choose(context.Background())
	if err != nil || got.Node != "kind-worker" {
		t.Errorf("after the agent left: %+v, %v; want kind-worker", got, err)
	}
}

func TestNodeDrainWaitsForTheBudgetAndUncordons(t *testing.T) {
	cs := nodeCluster()
	var mu sync.Mutex
	refusals := map[string]int{}
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		name := a.(k8stesting.CreateAction).GetObject().(interface{ GetName() string }).GetName()
		mu.Lock()
		defer mu.Unlock()
		// The budget refuses target-c twice (its turn comes once another replacement is ready).
		if name == "target-c" && refusals[name] < 2 {
			refusals[name]++
			return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 1)
		}
		return true, nil, nil
	})
	tl := timeline.New(time.Now())
	f := NewNodeDrain(Recorder{Timeline: tl, Name: "faults[0]"}, nodeChoice(cs), 10*time.Second)
	start := time.Now()
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 2*drainRetry {
		t.Errorf("drain returned after %s: it did not wait out two refusals", waited)
	}
	n, _ := cs.CoreV1().Nodes().Get(context.Background(), "kind-worker", metav1.GetOptions{})
	if !n.Spec.Unschedulable {
		t.Error("node not cordoned")
	}
	w := timeline.FaultWindows(tl.Entries())
	if len(w) != 1 || !w[0].Acted() || w[0].Params["node"] != "kind-worker" {
		t.Fatalf("windows %+v", w)
	}
	if !strings.Contains(w[0].EffectNote, "target-c after") {
		t.Errorf("proof %q does not name each eviction", w[0].EffectNote)
	}
	var evicted []string
	for _, e := range tl.Entries() {
		if e.Fault != nil && e.Fault.Action == timeline.FaultObserve && e.Pod != "" {
			evicted = append(evicted, e.Pod)
		}
	}
	if len(evicted) != 3 {
		t.Errorf("evictions recorded for %v, want the 3 pods on kind-worker", evicted)
	}
	if err := f.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
	n, _ = cs.CoreV1().Nodes().Get(context.Background(), "kind-worker", metav1.GetOptions{})
	if n.Spec.Unschedulable {
		t.Error("node still cordoned after revert")
	}
}

func TestNodeDrainBlockedByTheBudgetIsUnproven(t *testing.T) {
	cs := nodeCluster()
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewTooManyRequests("budget", 1)
	})
	tl := timeline.New(time.Now())
	f := NewNodeDrain(Recorder{Timeline: tl, Name: "faults[0]"}, nodeChoice(cs), 1500*time.Millisecond)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := timeline.FaultWindows(tl.Entries())
	if len(w) != 1 || w[0].Acted() || !strings.Contains(w[0].EffectNote, "refused the eviction") {
		t.Fatalf("a drain the budget blocks must leave its effect unproven: %+v", w)
	}
}

func TestNodeLossFreezesRecordsTheClusterTimingAndResumes(t *testing.T) {
	cs := nodeCluster()
	kcm := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kube-controller-manager-cp", Namespace: "kube-system",
		Labels: map[string]string{"component": "kube-controller-manager"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kcm",
			Command: []string{"kube-controller-manager", "--node-monitor-grace-period=20s", "--leader-elect=true"}}}}}
	secs := int32(12)
	old := metav1.NewMicroTime(time.Now().Add(-time.Second))
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kind-worker2", Namespace: "kube-node-lease"},
		Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: &secs, RenewTime: &old}}
	_ = cs.Tracker().Add(kcm)
	_ = cs.Tracker().Add(lease)
	var calls []string
	pause := func(_ context.Context, node string, on bool) error {
		calls = append(calls, node+map[bool]string{true: " pause", false: " resume"}[on])
		return nil
	}
	tl := timeline.New(time.Now())
	c := nodeChoice(cs)
	c.Node = "kind-worker2" // named: kind-worker2 also runs toxiproxy, which only "busiest" avoids
	f := NewNodeLoss(Recorder{Timeline: tl, Name: "faults[0]"}, c, pause)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := timeline.FaultWindows(tl.Entries())
	if len(w) != 1 || w[0].Params["node"] != "kind-worker2" || w[0].Params["pods"] != "target-b" {
		t.Fatalf("windows %+v", w)
	}
	h, err := oracle.NodeHealthFromParams(w[0].Params)
	if err != nil || h.GracePeriod != 20*time.Second || h.MonitorPeriod != oracle.DefaultNodeMonitorPeriod || h.LeaseDuration != 12*time.Second {
		t.Fatalf("recorded node health %+v, %v; want grace 20s from the flags, lease 12s from the Lease", h, err)
	}
	// The lease's renew time is before the freeze: proven.
	if !w[0].Acted() {
		t.Errorf("lease not renewed after the freeze, yet unproven: %s", w[0].EffectNote)
	}
	if err := f.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Join(calls, ",") != "kind-worker2 pause,kind-worker2 resume" {
		t.Errorf("pause calls %v", calls)
	}
}

func TestNodeLossUnprovenWhenTheLeaseMoves(t *testing.T) {
	cs := nodeCluster()
	secs := int32(4) // renew interval 1 s: the proof is read 3 s after the freeze
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kind-worker", Namespace: "kube-node-lease"},
		Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: &secs}}
	_ = cs.Tracker().Add(lease)
	// The "pause" does nothing: the node renews its lease after it.
	pause := func(ctx context.Context, node string, on bool) error {
		if on {
			go func() {
				time.Sleep(time.Second)
				l, _ := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, node, metav1.GetOptions{})
				now := metav1.NewMicroTime(time.Now())
				l.Spec.RenewTime = &now
				_, _ = cs.CoordinationV1().Leases("kube-node-lease").Update(ctx, l, metav1.UpdateOptions{})
			}()
		}
		return nil
	}
	tl := timeline.New(time.Now())
	f := NewNodeLoss(Recorder{Timeline: tl, Name: "faults[0]"}, nodeChoice(cs), pause)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := timeline.FaultWindows(tl.Entries())
	if len(w) != 1 || w[0].Acted() || !strings.Contains(w[0].EffectNote, "not stopped") {
		t.Fatalf("a node that kept renewing its lease must leave the fault unproven: %+v", w)
	}
	h, _ := oracle.NodeHealthFromParams(w[0].Params)
	if h.GracePeriod != oracle.DefaultNodeMonitorGracePeriod || !strings.Contains(h.Source, "default of v") {
		t.Errorf("without kube-controller-manager flags: %+v, want the version's default, said so", h)
	}
}

func TestNodeLossSkipsWhenNoNodeRunsTheTargetAlone(t *testing.T) {
	cs := nodeCluster()
	// toxiproxy-1 shares kind-worker2; an agent shares kind-worker. A DaemonSet's pod does not count.
	agentPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-0", Namespace: "ns"},
		Spec: corev1.PodSpec{NodeName: "kind-worker"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	ds := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "node-agent-x", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "probegate-node-agent"}}},
		Spec: corev1.PodSpec{NodeName: "kind-worker"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	_ = cs.Tracker().Add(agentPod)
	_ = cs.Tracker().Add(ds)
	c := nodeChoice(cs)
	c.Alone = true
	paused := false
	tl := timeline.New(time.Now())
	f := NewNodeLoss(Recorder{Timeline: tl, Name: "faults[0]"}, c, func(context.Context, string, bool) error { paused = true; return nil })
	if err := f.Inject(context.Background()); err != nil {
		t.Fatalf("no node to lose alone is a skip, not a harness error: %v", err)
	}
	w := timeline.FaultWindows(tl.Entries())
	if paused || len(w) != 1 || !w[0].Skipped || !strings.Contains(w[0].SkipNote, "kind-worker (also runs agent-0)") {
		t.Fatalf("paused %v, windows %+v", paused, w)
	}
	_ = cs.Tracker().Delete(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "ns", "agent-0")
	if got, err := c.Choose(context.Background()); err != nil || got.Node != "kind-worker" {
		t.Errorf("with only the DaemonSet's pod beside the target: %+v, %v; want kind-worker", got, err)
	}
}
