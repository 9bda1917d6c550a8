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
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/probegate/probegate/internal/seed"
	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	rolloutObserveTimeout = 500 * time.Millisecond
	bootPoll = 10 * time.Millisecond
}

func targetPod(name string, ready bool, running bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": "target"}},
		Spec:       corev1.PodSpec{NodeName: podNode(name), Containers: []corev1.Container{{Name: "target"}}},
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

// podNode is the node a fake target pod runs on: target-b on kind-worker2, the others on kind-worker.
func podNode(pod string) string {
	if pod == "target-b" {
		return "kind-worker2"
	}
	return "kind-worker"
}

func fakeTarget() *fake.Clientset {
	return fake.NewSimpleClientset(
		targetPod("target-a", true, true), targetPod("target-b", true, true), targetPod("target-c", true, true),
		targetPod("target-d", false, true), targetPod("target-e", true, false),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "postgres-0", Namespace: "ns", Labels: map[string]string{"app": "postgres"}}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "target", Namespace: "ns", Generation: 1},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "target"}},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
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
	if len(acts) != 2 || acts[0].Fault.Action != timeline.FaultInject || acts[0].Pod != f.Pod() || acts[0].Fault.Params["grace_s"] != "7" ||
		acts[0].Fault.Params["pod"] != f.Pod() || acts[1].Fault.Action != timeline.FaultObserve {
		t.Fatalf("timeline = %+v", acts)
	}
	// The fake deletes at once: the pod is gone, which proves the deletion.
	if obs := acts[1].Fault; obs.Params[timeline.ParamEffect] != timeline.EffectConfirmed || !strings.Contains(obs.Detail, "gone") {
		t.Fatalf("observe = %+v", obs)
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
	if len(acts) != 1 || acts[0].Fault.Action != timeline.FaultSkip || !strings.Contains(acts[0].Fault.Detail, "429") {
		t.Fatalf("timeline = %+v", acts)
	}
}

// evictionMarksDeleting makes the fake API act on an accepted eviction as the real one does: the
// pod gets a deletion timestamp and its grace period. It returns the pods evicted.
func evictionMarksDeleting(cs *fake.Clientset) *[]string {
	var evicted []string
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		name := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction).Name
		evicted = append(evicted, name)
		obj, err := cs.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), "ns", name)
		if err != nil {
			return true, nil, err
		}
		p := obj.(*corev1.Pod).DeepCopy()
		now, grace := metav1.Now(), int64(30)
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, &grace
		return true, nil, cs.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), p, "ns")
	})
	return &evicted
}

func TestEvictGoesThroughTheEvictionAPIAndSeesThePodTerminating(t *testing.T) {
	cs := fakeTarget()
	evicted := evictionMarksDeleting(cs)
	tl := timeline.New(time.Now())
	f := NewEvict(Recorder{Timeline: tl}, choice(cs, 2), nil)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(*evicted) != 1 {
		t.Fatalf("evictions = %v", *evicted)
	}
	acts := tl.Filter(timeline.KindFault)
	if len(acts) != 2 || acts[0].Fault.Action != timeline.FaultInject || acts[0].Pod != (*evicted)[0] {
		t.Fatalf("timeline = %+v", acts)
	}
	obs := acts[1].Fault
	if obs.Action != timeline.FaultObserve || acts[1].Pod != (*evicted)[0] || obs.Params[timeline.ParamEffect] != timeline.EffectConfirmed ||
		obs.Params["grace_s"] != "30" || obs.Params["deletion_timestamp"] == "" || !strings.Contains(obs.Detail, "terminating") {
		t.Fatalf("observe = %+v", obs)
	}
	if _, ok := obs.Params[timeline.ParamPhase]; ok {
		t.Fatalf("a one-shot fault's proof has no phase: %v", obs.Params)
	}
}

func TestEvictAcceptedButPodUntouchedIsNotObserved(t *testing.T) {
	cs := fakeTarget() // the fake accepts the eviction and does nothing to the pod
	tl := timeline.New(time.Now())
	f := NewEvict(Recorder{Timeline: tl}, choice(cs, 2), nil)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	acts := tl.Filter(timeline.KindFault)
	if len(acts) != 2 || acts[1].Fault.Action != timeline.FaultObserve || acts[1].Fault.Params[timeline.ParamEffect] != timeline.EffectNotObserved ||
		!strings.Contains(acts[1].Fault.Detail, "no deletion timestamp") {
		t.Fatalf("timeline = %+v", acts)
	}
}

func TestEvictedPodReplacedUnderItsNameIsGone(t *testing.T) {
	cs := fakeTarget()
	// The eviction removes the pod and another pod takes its name before the fault looks.
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		name := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction).Name
		p := targetPod(name, false, true)
		p.UID = "replacement"
		return true, nil, cs.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), p, "ns")
	})
	tl := timeline.New(time.Now())
	c := choice(cs, 0)
	c.Pod = "target-a"
	if p, _ := cs.CoreV1().Pods("ns").Get(context.Background(), "target-a", metav1.GetOptions{}); p != nil {
		p.UID = "original"
		cs.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), p, "ns")
	}
	if err := NewEvict(Recorder{Timeline: tl}, c, nil).Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	acts := tl.Filter(timeline.KindFault)
	if obs := acts[len(acts)-1].Fault; obs.Params[timeline.ParamEffect] != timeline.EffectConfirmed || !strings.Contains(obs.Detail, "UID replacement") {
		t.Fatalf("observe = %+v", obs)
	}
}

func TestPodDeleteIgnoredIsNotObserved(t *testing.T) {
	cs := fakeTarget()
	// The API answers the delete but the pod stays as it was.
	cs.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, nil })
	tl := timeline.New(time.Now())
	f := NewPodDelete(Recorder{Timeline: tl}, choice(cs, 1), nil)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	acts := tl.Filter(timeline.KindFault)
	if len(acts) != 2 || acts[1].Fault.Params[timeline.ParamEffect] != timeline.EffectNotObserved ||
		acts[1].Fault.Detail != "pod has no deletion timestamp right after (phase Running): not being deleted" {
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
	f := NewColdStart(Recorder{Timeline: tl}, cs, "ns", deploymentWorkload(cs, "ns", "target"), "", 25*time.Second)
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
	// The fake has no controller, so no new pod ever boots: the bootstrap, stopped by the revert, is
	// honestly not observed; the revert's own rollout is.
	var got []string
	for _, e := range tl.Filter(timeline.KindFault) {
		got = append(got, e.Fault.Action+"/"+e.Fault.Params[timeline.ParamPhase]+"/"+e.Fault.Params[timeline.ParamEffect])
	}
	if strings.Join(got, " ") != "inject// observe/during/not-observed revert// observe/after/confirmed" {
		t.Fatalf("actions = %v", got)
	}
	if d := tl.Filter(timeline.KindFault)[1].Fault.Detail; !strings.Contains(d, "no pod with BOOTSTRAP_DURATION=25s had appeared when the measurement stopped") {
		t.Fatalf("detail = %q", d)
	}
}

// bootingPod is a pod of the cold-start template created at created: its container started
// startedAfter later and, when readyAfter > 0, the pod became ready readyAfter after creation.
func bootingPod(name string, created time.Time, startedAfter, readyAfter time.Duration) *corev1.Pod {
	p := targetPod(name, readyAfter > 0, true)
	p.UID = types.UID("uid-" + name)
	p.CreationTimestamp = metav1.NewTime(created)
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "OTHER", Value: "x"}, {Name: DefaultBootstrapEnv, Value: "25s"}}
	p.Status.ContainerStatuses[0].State.Running.StartedAt = metav1.NewTime(created.Add(startedAfter))
	if readyAfter > 0 {
		p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(created.Add(readyAfter))
	}
	return p
}

func TestColdStartMeasuresTheNewPodsBootstrap(t *testing.T) {
	cs := fakeTarget()
	bumpGeneration(cs)
	tl := timeline.New(time.Now())
	f := NewColdStart(Recorder{Timeline: tl, Name: "faults[0]"}, cs, "ns", deploymentWorkload(cs, "ns", "target"), "target", 25*time.Second)
	f.BootTimeout = 5 * time.Second
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	// An old-template pod appearing now proves nothing; the controller's new pod then boots for 27 s.
	created := time.Now().Add(-30 * time.Second).Truncate(time.Second)
	other := targetPod("target-old", true, true)
	if _, err := cs.CoreV1().Pods("ns").Create(context.Background(), other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("ns").Create(context.Background(), bootingPod("target-new", created, 2*time.Second, 29*time.Second), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.boot.wait()
	acts := tl.Filter(timeline.KindFault)
	if len(acts) != 2 {
		t.Fatalf("actions = %+v", acts)
	}
	obs := acts[1]
	if obs.Fault.Action != timeline.FaultObserve || obs.Pod != "target-new" || obs.Fault.Params[timeline.ParamEffect] != timeline.EffectConfirmed ||
		obs.Fault.Params[timeline.ParamPhase] != timeline.PhaseDuring || obs.Fault.Params["started_s"] != "2" ||
		obs.Fault.Params["boot_s"] != "27" || obs.Fault.Params["ready_s"] != "29" || obs.Fault.Params["generation"] != "2" {
		t.Fatalf("observe = %+v %v", obs, obs.Fault.Params)
	}
	want := "new pod target-new (BOOTSTRAP_DURATION=25s): container started 2s after creation, ready 27s after it started (bootstrap 25s): booted cold"
	if obs.Fault.Detail != want {
		t.Fatalf("detail:\n%s\nwant\n%s", obs.Fault.Detail, want)
	}
}

func TestColdStartNoNewPodWithinTheBoundIsNotObserved(t *testing.T) {
	cs := fakeTarget()
	bumpGeneration(cs)
	tl := timeline.New(time.Now())
	f := NewColdStart(Recorder{Timeline: tl}, cs, "ns", deploymentWorkload(cs, "ns", "target"), "", 25*time.Second)
	f.BootTimeout = 100 * time.Millisecond
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.boot.wait()
	acts := tl.Filter(timeline.KindFault)
	if len(acts) != 2 || acts[1].Fault.Params[timeline.ParamEffect] != timeline.EffectNotObserved ||
		!strings.Contains(acts[1].Fault.Detail, "no pod with BOOTSTRAP_DURATION=25s had appeared within") {
		t.Fatalf("actions = %+v", acts)
	}
}

func TestColdStartWithTheSettingAlreadyInPlaceIsNotObserved(t *testing.T) {
	cs := fakeTarget()
	bumpGeneration(cs)
	tl := timeline.New(time.Now())
	f := NewColdStart(Recorder{Timeline: tl}, cs, "ns", deploymentWorkload(cs, "ns", "target"), "", 25*time.Second)
	f.Env = "OTHER"
	f.Bootstrap = 0
	d, _ := cs.AppsV1().Deployments("ns").Get(context.Background(), "target", metav1.GetOptions{})
	d.Spec.Template.Spec.Containers[0].Env[0].Value = "0s"
	cs.AppsV1().Deployments("ns").Update(context.Background(), d, metav1.UpdateOptions{})
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	acts := tl.Filter(timeline.KindFault)
	if len(acts) != 2 || acts[1].Fault.Params[timeline.ParamEffect] != timeline.EffectNotObserved || !strings.Contains(acts[1].Fault.Detail, "already had OTHER=0s") {
		t.Fatalf("actions = %+v", acts)
	}
	if err := f.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestBootProof(t *testing.T) {
	c := &ColdStart{Bootstrap: 25 * time.Second}
	created := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	restarted := func(ran time.Duration, reason string, code int32) *corev1.Pod {
		p := bootingPod("p", created, 40*time.Second, 0)
		cs := &p.Status.ContainerStatuses[0]
		cs.RestartCount = 1
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code,
			StartedAt: metav1.NewTime(created.Add(time.Second)), FinishedAt: metav1.NewTime(created.Add(time.Second + ran))}
		return p
	}
	notStarted := targetPod("p", false, true)
	notStarted.CreationTimestamp = metav1.NewTime(created)
	notStarted.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		now       time.Duration // after creation
		final     bool
		done, ok  bool
		detailHas string
	}{
		{"ready after the bootstrap", bootingPod("p", created, time.Second, 27*time.Second), 30 * time.Second, false, true, true,
			"container started 1s after creation, ready 26s after it started (bootstrap 25s): booted cold"},
		{"ready within the one-second tolerance", bootingPod("p", created, time.Second, 25*time.Second), 30 * time.Second, false, true, true, "booted cold"},
		{"ready too soon", bootingPod("p", created, time.Second, 3*time.Second), 5 * time.Second, false, true, false,
			"ready 2s after it started (bootstrap 25s): sooner than the bootstrap: the cold start did not show"},
		{"killed while booting", restarted(21*time.Second, "Error", 137), 45 * time.Second, false, true, true,
			"ended after 21s without becoming ready (Error, exit 137, 1 restarts): killed while booting cold"},
		{"crashed at once", restarted(300*time.Millisecond, "Error", 1), 45 * time.Second, false, true, false,
			"too short to show the bootstrap: not a cold start"},
		{"still booting", bootingPod("p", created, time.Second, 0), 10 * time.Second, false, false, false, ""},
		{"still booting at the end, long enough", bootingPod("p", created, time.Second, 0), 40 * time.Second, true, true, true,
			"not ready 39s after it started (bootstrap 25s): still booting cold"},
		{"still booting at the end, too early", bootingPod("p", created, time.Second, 0), 10 * time.Second, true, true, false,
			"not yet as long as the bootstrap"},
		{"never started", notStarted, 60 * time.Second, true, true, false, "container not started 1m0s after creation, waiting: ContainerCreating"},
		{"not started yet", notStarted, 5 * time.Second, false, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, ok, detail, params := c.bootProof(tc.pod, created.Add(tc.now), tc.final)
			if done != tc.done || ok != tc.ok || !strings.Contains(detail, tc.detailHas) || params["pod"] != "p" {
				t.Fatalf("bootProof = done %v ok %v %q %v; want done %v ok %v, detail with %q", done, ok, detail, params, tc.done, tc.ok, tc.detailHas)
			}
		})
	}
}

func TestRollingUpdatePatchesTheTemplate(t *testing.T) {
	cs := fakeTarget()
	tl := timeline.New(time.Now())
	f := NewRollingUpdate(Recorder{Timeline: tl}, deploymentWorkload(cs, "ns", "target"))
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
	if len(acts) != 2 || acts[0].Fault.Action != timeline.FaultInject || acts[1].Fault.Params[timeline.ParamEffect] != timeline.EffectNotObserved ||
		!strings.Contains(acts[1].Fault.Detail, "generation 1 not observed by the controller") {
		t.Fatalf("timeline = %+v", acts)
	}
}

func TestRollingUpdateSeesTheControllerTakeTheNewGeneration(t *testing.T) {
	cs := fakeTarget()
	// A controller that has observed the patched generation and updated one of three replicas.
	cs.PrependReactor("get", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj, err := cs.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), "ns", a.(k8stesting.GetAction).GetName())
		if err != nil {
			return true, nil, err
		}
		d := obj.(*appsv1.Deployment).DeepCopy()
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 3}
		return true, d, nil
	})
	tl := timeline.New(time.Now())
	if err := NewRollingUpdate(Recorder{Timeline: tl}, deploymentWorkload(cs, "ns", "target")).Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	acts := tl.Filter(timeline.KindFault)
	if len(acts) != 2 || acts[1].Fault.Params[timeline.ParamEffect] != timeline.EffectConfirmed ||
		acts[1].Fault.Detail != "rollout of deployment target generation 1 under way: 1 updated, 3 ready of 3" {
		t.Fatalf("timeline = %+v", acts)
	}
}

// fakeNode plays the node container for freeze: one task per target pod, and process states that
// follow the signals sent.
type fakeNode struct {
	mu    sync.Mutex
	state map[string]string // pid → State
	calls []string
	gone  bool // the target containers' processes are gone (their tasks too)
	// children are the processes of a container besides its main one, by main pid (an entrypoint
	// wrapper's app).
	children map[string][]string
	deny     bool // kill fails although the process is there
	// signalled, when set, is called after a kill took effect on the node, before the command
	// returns; a command whose context has ended by then fails, as docker exec killed late would.
	signalled func()
}

func (n *fakeNode) exec(ctx context.Context, node string, args ...string) ([]byte, error) {
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
		if n.gone {
			return []byte("TASK          PID     STATUS\nsandbox1      100     RUNNING\n"), nil
		}
		// Each node lists the tasks of its own pods only.
		tasks := "TASK          PID     STATUS\nsandbox1      100     RUNNING\n"
		for pod, pid := range map[string]string{"target-a": "4242", "target-b": "4343"} {
			if podNode(pod) == node {
				tasks += "abc" + pod + "   " + pid + "    RUNNING\n"
			}
		}
		return []byte(tasks), nil
	case len(args) == 6 && strings.Join(args[:5], " ") == "ctr -n k8s.io task ps":
		if n.gone {
			return []byte("ctr: no running task found: task " + args[5] + " not found: not found"), errors.New("exit status 1")
		}
		for pod, pid := range map[string]string{"target-a": "4242", "target-b": "4343"} {
			if args[5] == "abc"+pod && podNode(pod) == node {
				out := "PID     INFO\n" + pid + "    -\n"
				for _, c := range n.children[pid] {
					out += c + "    -\n"
				}
				return []byte(out), nil
			}
		}
		return []byte("ctr: task not found"), errors.New("exit status 1")
	case args[0] == "kill":
		// The message does not matter: the fault asks the runtime whether the process is gone.
		if n.gone || n.deny {
			return []byte("kill: failed"), errors.New("exit status 1")
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
	f := NewFreeze(Recorder{Timeline: tl, Name: "faults[0]"}, c, "", ExecProcs(node.exec))
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := f.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Stop the main process, list the container's processes (none other), read each one's state;
	// on revert, check the main one is still the container's, resume, read the states again.
	wantCalls := "ctr -n k8s.io task ls|kill -STOP 4343|ctr -n k8s.io task ps abctarget-b|ctr -n k8s.io task ps abctarget-b|cat /proc/4343/status|" +
		"ctr -n k8s.io task ls|kill -CONT 4343|ctr -n k8s.io task ps abctarget-b|cat /proc/4343/status"
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
	f := NewFreeze(Recorder{Timeline: tl}, c, "target", ExecProcs(node.exec))
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	node.gone = true // kubelet killed the frozen container
	if err := f.Revert(context.Background()); err != nil {
		t.Fatalf("revert after the process died: %v", err)
	}
	acts := tl.Filter(timeline.KindFault)
	last := acts[len(acts)-1].Fault
	if last.Action != timeline.FaultRevert || !strings.Contains(last.Detail, "gone") {
		t.Fatalf("last action = %+v", last)
	}
}

func TestFreezeRevertFailsWhileTheProcessIsStillThere(t *testing.T) {
	cs := fakeTarget()
	node := &fakeNode{state: map[string]string{}}
	tl := timeline.New(time.Now())
	c := choice(cs, 0)
	c.Pod = "target-a"
	f := NewFreeze(Recorder{Timeline: tl}, c, "target", ExecProcs(node.exec))
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	node.deny = true // SIGCONT fails, and the task still runs pid 4242: the process stays frozen
	if err := f.Revert(context.Background()); err == nil || !f.injected {
		t.Fatalf("a failed resume of a live process was taken for a gone one: err %v, injected %v", err, f.injected)
	}
	if acts := tl.Filter(timeline.KindFault); acts[len(acts)-1].Fault.Action == timeline.FaultRevert {
		t.Fatalf("revert recorded although the process is still stopped: %+v", acts[len(acts)-1].Fault)
	}
}

func TestFreezeStateNotStoppedIsNotObserved(t *testing.T) {
	cs := fakeTarget()
	node := &fakeNode{state: map[string]string{}}
	exec := func(ctx context.Context, on string, args ...string) ([]byte, error) {
		if args[0] == "kill" { // the signal is "sent" but never lands
			return nil, nil
		}
		return node.exec(ctx, on, args...)
	}
	node.state["4242"] = "S (sleeping)"
	tl := timeline.New(time.Now())
	c := choice(cs, 0)
	c.Pod = "target-a"
	f := NewFreeze(Recorder{Timeline: tl}, c, "", ExecProcs(exec))
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	acts := tl.Filter(timeline.KindFault)
	obs := acts[len(acts)-1].Fault
	if obs.Action != timeline.FaultObserve || obs.Params[timeline.ParamEffect] != timeline.EffectNotObserved ||
		obs.Params[timeline.ParamPhase] != timeline.PhaseDuring || obs.Detail != "1 of 1 processes of container target not stopped: 4242 S (sleeping)" {
		t.Fatalf("observe = %+v", obs)
	}
}

func TestTaskPID(t *testing.T) {
	out := []byte("TASK PID STATUS\nabc 0 CREATED\ndef 12 RUNNING\n")
	if _, err := taskPID(out, "abc"); !gone(err) {
		t.Fatal("a task without a process was accepted")
	}
	if pid, err := taskPID(out, "def"); err != nil || pid != 12 {
		t.Fatalf("taskPID = %d, %v", pid, err)
	}
	if _, err := taskPID(out, "zzz"); !gone(err) {
		t.Fatalf("missing task: %v, want it gone", err)
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
	f := NewFreeze(Recorder{Timeline: tl}, c, "", ExecProcs(node.exec))
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

type fakeTally map[string]uint64

func (f fakeTally) SetRate(float64) float64     { return 0 }
func (f fakeTally) ServedBy() map[string]uint64 { return f }

func TestPodChoiceBusiest(t *testing.T) {
	cs := fakeTarget()
	c := choice(cs, 1)
	c.Pod = PodBusiest
	// target-d served the most but is not ready, target-e not running: the busiest of the ready ones.
	c.SetLoad(fakeTally{"target-a": 3, "target-b": 40, "target-c": 12, "target-d": 900, "target-e": 900})
	p, how, err := c.choose(context.Background())
	if err != nil || p.Name != "target-b" || !strings.Contains(how, "served 40") {
		t.Fatalf("busiest = %v, %q, %v; want target-b (40 served)", p, how, err)
	}
	// Before any request named a pod, or with no load, it draws as random does, and says so.
	for _, tally := range []RateSetter{fakeTally{}, nil} {
		c := choice(cs, 1)
		c.Pod = PodBusiest
		if tally != nil {
			c.SetLoad(tally)
		}
		r := choice(cs, 1)
		want, _ := r.Choose(context.Background())
		p, how, err := c.choose(context.Background())
		if err != nil || p.Name != want.Name || !strings.Contains(how, "drawn at random") {
			t.Fatalf("busiest without a tally (%v) = %v, %q, %v; want the random draw %s", tally, p, how, err, want.Name)
		}
	}
	// The eviction records how its pod was chosen.
	tl := timeline.New(time.Now())
	c.SetLoad(fakeTally{"target-c": 7})
	f := NewEvict(Recorder{Timeline: tl, Name: "faults[0]"}, c, nil)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	acts := tl.Filter(timeline.KindFault)
	if len(acts) == 0 || acts[0].Pod != "target-c" || !strings.Contains(acts[0].Fault.Params["chosen"], "busiest") {
		t.Fatalf("evict busiest: timeline = %+v", acts)
	}
}
