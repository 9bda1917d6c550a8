package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/probegate/probegate/internal/seed"
	"github.com/probegate/probegate/internal/timeline"
)

func init() { rolloutObserveTimeout = 500 * time.Millisecond }

func targetPod(name string, ready bool, running bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": "target"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "target"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionFalse}}},
	}
	if ready {
		p.Status.Conditions[0].Status = corev1.ConditionTrue
	}
	if !running {
		p.Status.Phase = corev1.PodPending
	}
	if running {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "target", ContainerID: "containerd://abc" + name,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	}
	return p
}

func fakeTarget() *fake.Clientset {
	return fake.NewSimpleClientset(
		targetPod("target-a", true, true), targetPod("target-b", true, true), targetPod("target-c", true, true),
		targetPod("target-d", false, true), targetPod("target-e", true, false),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "postgres-0", Namespace: "ns", Labels: map[string]string{"app": "postgres"}}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "target", Namespace: "ns", Generation: 1},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "target", Env: []corev1.EnvVar{{Name: "OTHER", Value: "x"}}}}}}}},
	)
}

func choice(cs *fake.Clientset, s uint64) PodChoice {
	return PodChoice{Client: cs, Namespace: "ns", Selector: "app=target", Rand: seed.New(s).Fork("f")}
}

func TestPodChoiceIsSeededAndPicksReadyPods(t *testing.T) {
	cs := fakeTarget()
	seen := map[string]bool{}
	for s := uint64(0); s < 40; s++ {
		a, err := choice(cs, s).Choose(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := choice(cs, s).Choose(context.Background())
		if a.Name != b.Name {
			t.Fatalf("seed %d chose %s then %s", s, a.Name, b.Name)
		}
		seen[a.Name] = true
	}
	if len(seen) != 3 || seen["target-d"] || seen["target-e"] {
		t.Fatalf("chosen pods %v: want only the three ready, running ones", seen)
	}
	c := choice(cs, 1)
	c.Pod = "target-d"
	if p, err := c.Choose(context.Background()); err != nil || p.Name != "target-d" {
		t.Fatalf("named pod: %v, %v", p, err)
	}
	c.Pod = "nope"
	if _, err := c.Choose(context.Background()); err == nil {
		t.Fatal("a missing named pod was accepted")
	}
}

func TestPodDeleteWithGrace(t *testing.T) {
	cs := fakeTarget()
	tl := timeline.New(time.Now())
	grace := 7 * time.Second
	f := NewPodDelete(Recorder{Timeline: tl, Name: "faults[0]"}, choice(cs, 3), &grace)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	var deletes []k8stesting.DeleteActionImpl
	for _, a := range cs.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			deletes = append(deletes, d)
		}
	}
	if len(deletes) != 1 || deletes[0].Name != f.Pod() || *deletes[0].DeleteOptions.GracePeriodSeconds != 7 {
		t.Fatalf("deletes = %+v, want one of %s with grace 7", deletes, f.Pod())
	}
	acts := tl.Filter(timeline.KindFault)
	if len(acts) != 2 || acts[0].Fault.Action != "inject" || acts[0].Pod != f.Pod() || acts[0].Fault.Params["grace_s"] != "7" ||
		acts[0].Fault.Params["pod"] != f.Pod() || acts[1].Fault.Action != "observe" {
		t.Fatalf("timeline = %+v", acts)
	}
	if err := f.Revert(context.Background()); err != nil || len(tl.Filter(timeline.KindFault)) != 2 {
		t.Fatalf("revert of a one-shot fault wrote something or failed: %v", err)
	}
}

func TestEvictRefusedByBudgetIsASkip(t *testing.T) {
	cs := fakeTarget()
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	})
	tl := timeline.New(time.Now())
	f := NewEvict(Recorder{Timeline: tl}, choice(cs, 1), nil)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatalf("a refused eviction is not a harness error: %v", err)
	}
	if !strings.Contains(f.Refused(), "disruption budget") {
		t.Fatalf("Refused() = %q", f.Refused())
	}
	acts := tl.Filter(timeline.KindFault)
	if len(acts) != 1 || acts[0].Fault.Action != "skip" || !strings.Contains(acts[0].Fault.Detail, "429") {
		t.Fatalf("timeline = %+v", acts)
	}
}

func TestEvictGoesThroughTheEvictionAPI(t *testing.T) {
	cs := fakeTarget()
	var evicted []string
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "eviction" {
			ev := a.(k8stesting.CreateAction).GetObject().(interface{ GetName() string })
			evicted = append(evicted, ev.GetName())
		}
		return false, nil, nil
	})
	tl := timeline.New(time.Now())
	f := NewEvict(Recorder{Timeline: tl}, choice(cs, 2), nil)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(evicted) != 1 {
		t.Fatalf("evictions = %v", evicted)
	}
	if acts := tl.Filter(timeline.KindFault); len(acts) < 1 || acts[0].Fault.Action != "inject" || acts[0].Pod != evicted[0] {
		t.Fatalf("timeline = %+v", acts)
	}
}

// bumpGeneration makes the fake API behave like a Deployment controller: a spec update raises the
// generation and the status observes it at once.
func bumpGeneration(cs *fake.Clientset) {
	cs.PrependReactor("update", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.UpdateAction).GetObject().(*appsv1.Deployment)
		d.Generation++
		d.Status.ObservedGeneration = d.Generation
		return false, nil, nil
	})
}

func TestColdStartSetsAndRestoresBootstrap(t *testing.T) {
	cs := fakeTarget()
	bumpGeneration(cs)
	tl := timeline.New(time.Now())
	f := NewColdStart(Recorder{Timeline: tl}, cs, "ns", "target", "", 25*time.Second)
	env := func() []corev1.EnvVar {
		d, err := cs.AppsV1().Deployments("ns").Get(context.Background(), "target", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d.Spec.Template.Spec.Containers[0].Env
	}
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e := env(); len(e) != 2 || e[1].Name != DefaultBootstrapEnv || e[1].Value != "25s" {
		t.Fatalf("env after inject = %+v", e)
	}
	if err := f.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e := env(); len(e) != 1 || e[0].Name != "OTHER" {
		t.Fatalf("env after revert = %+v, want the variable removed again", e)
	}
	var got []string
	for _, e := range tl.Filter(timeline.KindFault) {
		got = append(got, e.Fault.Action+"/"+e.Fault.Params["effect"])
	}
	if strings.Join(got, " ") != "inject/ observe/confirmed revert/ observe/confirmed" {
		t.Fatalf("actions = %v", got)
	}
}

func TestRollingUpdatePatchesTheTemplate(t *testing.T) {
	cs := fakeTarget()
	tl := timeline.New(time.Now())
	f := NewRollingUpdate(Recorder{Timeline: tl}, cs, "ns", "target")
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	d, _ := cs.AppsV1().Deployments("ns").Get(context.Background(), "target", metav1.GetOptions{})
	stamp := d.Spec.Template.Annotations[RestartedAtAnnotation]
	if _, err := time.Parse(time.RFC3339Nano, stamp); err != nil {
		t.Fatalf("template annotation %q: %v", stamp, err)
	}
	acts := tl.Filter(timeline.KindFault)
	// The fake has no controller: the rollout is honestly reported as not observed.
	if len(acts) != 2 || acts[0].Fault.Action != "inject" || acts[1].Fault.Params["effect"] != "not-observed" {
		t.Fatalf("timeline = %+v", acts)
	}
}

// fakeNode plays the node container for freeze: one task per target pod, and process states that
// follow the signals sent.
type fakeNode struct {
	mu    sync.Mutex
	state map[string]string // pid → State
	calls []string
	gone  bool
	// signalled, when set, is called after a kill took effect on the node, before the command
	// returns; a command whose context has ended by then fails, as docker exec killed late would.
	signalled func()
}

func (n *fakeNode) exec(ctx context.Context, args ...string) ([]byte, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if args[0] == "kill" && !n.gone && n.signalled != nil {
		defer func() { n.signalled() }()
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	n.calls = append(n.calls, strings.Join(args, " "))
	switch {
	case strings.Join(args, " ") == "ctr -n k8s.io task ls":
		return []byte("TASK          PID     STATUS\nsandbox1      100     RUNNING\nabctarget-a   4242    RUNNING\nabctarget-b   4343    RUNNING\n"), nil
	case args[0] == "kill":
		if n.gone {
			return []byte("kill: (" + args[2] + ") - No such process"), errors.New("exit status 1")
		}
		n.state[args[2]] = map[string]string{"-STOP": "T (stopped)", "-CONT": "S (sleeping)"}[args[1]]
		return nil, nil
	case args[0] == "cat":
		pid := strings.Split(args[1], "/")[2]
		return []byte(fmt.Sprintf("Name:\ttarget\nState:\t%s\nPid:\t%s\n", n.state[pid], pid)), nil
	}
	return nil, fmt.Errorf("unexpected command %v", args)
}

func TestFreezeStopsAndResumesTheProcess(t *testing.T) {
	cs := fakeTarget()
	node := &fakeNode{state: map[string]string{}}
	tl := timeline.New(time.Now())
	c := choice(cs, 0)
	c.Pod = "target-b"
	f := NewFreeze(Recorder{Timeline: tl, Name: "faults[0]"}, c, "", node.exec)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := f.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantCalls := "ctr -n k8s.io task ls|kill -STOP 4343|cat /proc/4343/status|kill -CONT 4343|cat /proc/4343/status"
	if got := strings.Join(node.calls, "|"); got != wantCalls {
		t.Fatalf("node commands:\n%s\nwant\n%s", got, wantCalls)
	}
	var got []string
	for _, e := range tl.Filter(timeline.KindFault) {
		got = append(got, e.Fault.Action+"/"+e.Fault.Params["state"]+"/"+e.Fault.Params["effect"])
		if e.Pod != "target-b" || e.Fault.Target != "target-b" {
			t.Fatalf("entry not aimed at the pod: %+v", e)
		}
	}
	if strings.Join(got, " ") != "inject// observe/T (stopped)/confirmed revert// observe/S (sleeping)/confirmed" {
		t.Fatalf("actions = %v", got)
	}
}

func TestFreezeRevertWhenProcessIsGone(t *testing.T) {
	cs := fakeTarget()
	node := &fakeNode{state: map[string]string{}}
	tl := timeline.New(time.Now())
	c := choice(cs, 0)
	c.Pod = "target-a"
	f := NewFreeze(Recorder{Timeline: tl}, c, "target", node.exec)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	node.gone = true // kubelet killed the frozen container
	if err := f.Revert(context.Background()); err != nil {
		t.Fatalf("revert after the process died: %v", err)
	}
	acts := tl.Filter(timeline.KindFault)
	last := acts[len(acts)-1].Fault
	if last.Action != "revert" || !strings.Contains(last.Detail, "gone") {
		t.Fatalf("last action = %+v", last)
	}
}

func TestTaskPIDAndProcState(t *testing.T) {
	out := []byte("TASK PID STATUS\nabc 0 CREATED\ndef 12 RUNNING\n")
	if _, err := taskPID(out, "abc"); err == nil {
		t.Fatal("a task without a process was accepted")
	}
	if pid, err := taskPID(out, "def"); err != nil || pid != "12" {
		t.Fatalf("taskPID = %q, %v", pid, err)
	}
	if _, err := taskPID(out, "zzz"); err == nil {
		t.Fatal("missing task accepted")
	}
	if st := procState([]byte("Name:\tx\nState:\tR (running)\n")); st != "R (running)" {
		t.Fatalf("procState = %q", st)
	}
}

// Ctrl-C while the STOP is on its way to the node: the process was stopped, so the fault counts as
// injected and its revert resumes it; it is never left frozen.
func TestFreezeInterruptedDuringStopIsStillResumed(t *testing.T) {
	cs := fakeTarget()
	node := &fakeNode{state: map[string]string{}}
	tl := timeline.New(time.Now())
	c := choice(cs, 0)
	c.Pod = "target-a"
	f := NewFreeze(Recorder{Timeline: tl}, c, "", node.exec)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node.signalled = cancel
	if err := f.Inject(ctx); err != nil {
		t.Logf("inject: %v", err)
	}
	node.signalled = nil
	if err := f.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := node.state["4242"]; st != "S (sleeping)" {
		t.Fatalf("process left %q after the revert; node commands %v", st, node.calls)
	}
}
