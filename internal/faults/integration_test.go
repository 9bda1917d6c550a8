package faults_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/seed"
	"github.com/probegate/probegate/internal/testcluster"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/loadgen"
)

// shared is the one install of the bundled target (good variant, 3 replicas, PostgreSQL behind
// toxiproxy) the injector tests take turns on: each leaves it as it found it (three ready pods, the
// fixture's PodDisruptionBudget, its settings rolled back), so one install serves them all (each
// costs a namespace, a database and a rollout: ~20 s on a 2-core machine). TestMain deletes it.
var shared struct {
	once sync.Once
	ns   string
	fenv faults.Env
	ep   deploy.Endpoints
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.ns != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if env := testcluster.Shared(); env != nil {
			_ = env.Client.CoreV1().Namespaces().Delete(ctx, shared.ns, metav1.DeleteOptions{})
		}
		cancel()
	}
	os.Exit(code)
}

// fixture returns the faults' environment for the shared install, installing it on first use, once
// its three pods are ready; the timeline and random source are the test's own.
func fixture(t *testing.T, ctx context.Context) (*testcluster.Env, faults.Env, deploy.Endpoints) {
	t.Helper()
	env := testcluster.Require(t)
	shared.once.Do(func() { shared.err = install(ctx, env) })
	if shared.err != nil {
		t.Fatalf("install the bundled target: %v", shared.err)
	}
	fenv := shared.fenv
	fenv.Timeline, fenv.Rand = timeline.New(time.Now()), seed.New(1).Fork(t.Name())
	waitSettled(t, ctx, fenv, 3, 2*time.Minute)
	return env, fenv, shared.ep
}

// waitSettled waits until the target runs exactly n pods, every one ready and none terminating: a
// pod an earlier test replaced (a rollout's old pod draining its withdrawal delay) still answers.
func waitSettled(t *testing.T, ctx context.Context, fenv faults.Env, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		list, err := fenv.Client.CoreV1().Pods(fenv.Namespace).List(ctx, metav1.ListOptions{LabelSelector: fenv.Selector})
		ready, total := 0, 0
		if err == nil {
			total = len(list.Items)
			for _, p := range list.Items {
				for _, c := range p.Status.Conditions {
					if p.DeletionTimestamp == nil && c.Type == "Ready" && c.Status == "True" {
						ready++
					}
				}
			}
		}
		if err == nil && total == n && ready == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("target not settled after %s: %d pods, %d ready and not terminating, want %d (err %v)", within, total, ready, n, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func install(ctx context.Context, env *testcluster.Env) error {
	ns := fmt.Sprintf("t-faults-%d", time.Now().UnixNano()%100000)
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"probegate.dev/test": "true"}}}
	if _, err := env.Client.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	shared.ns = ns
	slot, err := deploy.FreeSlot(ctx, env.Client)
	if err != nil {
		return err
	}
	opts := deploy.Options{Namespace: ns, Slot: slot, Timeout: 4 * time.Minute}
	if err := env.Cluster.LoadImages(ctx, deploy.Images(opts)...); err != nil {
		return err
	}
	ep, err := deploy.Install(ctx, env.Client, opts)
	if err != nil {
		return err
	}
	shared.ep = ep
	shared.fenv = faults.Env{
		Client: env.Client, Config: env.Config, Namespace: ns, Deployment: ep.TargetDeployment, Container: "target",
		Selector: ep.TargetSelector, ToxiproxyURL: ep.ToxiproxyURL, DBProxy: ep.ToxiproxyProxy,
		AdminPort: int(ep.AdminPort), NodeProcs: faults.ExecProcs(env.Cluster.NodeExecOn),
	}
	return nil
}

func build(t *testing.T, fenv faults.Env, spec faults.Spec) faults.Fault {
	t.Helper()
	f, skip, err := faults.Build(spec, fenv)
	if err != nil || skip != "" {
		t.Fatalf("build %s: skip %q, err %v", spec.Type, skip, err)
	}
	return f
}

// lastObserve returns the newest observe action of the named fault.
func lastObserve(t *testing.T, tl *timeline.Timeline, name string) *timeline.FaultAction {
	t.Helper()
	entries := tl.Filter(timeline.KindFault)
	for i := len(entries) - 1; i >= 0; i-- {
		if f := entries[i].Fault; f.Name == name && f.Action == timeline.FaultObserve {
			return f
		}
	}
	t.Fatalf("no observe action for %s", name)
	return nil
}

// waitObserve waits until the named fault has an observe action with the given phase ("" for a
// one-shot proof) and returns it: some proofs are measured in the background after Inject.
func waitObserve(t *testing.T, tl *timeline.Timeline, name, phase string, within time.Duration) *timeline.FaultAction {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		for _, e := range tl.Filter(timeline.KindFault) {
			if f := e.Fault; f.Name == name && f.Action == timeline.FaultObserve && f.Params[timeline.ParamPhase] == phase {
				return f
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q observe action for %s within %s", phase, name, within)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// mustConfirm fails unless f is a proof of effect, confirmed, with the phase wanted ("" for a
// one-shot proof, which counts as during).
func mustConfirm(t *testing.T, f *timeline.FaultAction, phase string) {
	t.Helper()
	t.Logf("%s %s observe: %s %v", f.Type, phase, f.Detail, f.Params)
	if f.Action != timeline.FaultObserve || f.Params[timeline.ParamEffect] != timeline.EffectConfirmed {
		t.Fatalf("%s %s: effect not observed: %s %v", f.Type, phase, f.Detail, f.Params)
	}
	if f.Params[timeline.ParamPhase] != phase {
		t.Fatalf("%s: proof phase %q, want %q", f.Type, f.Params[timeline.ParamPhase], phase)
	}
}

// waitReady waits until the target has n ready, non-terminating pods.
func waitReady(t *testing.T, ctx context.Context, fenv faults.Env, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		list, err := fenv.Client.CoreV1().Pods(fenv.Namespace).List(ctx, metav1.ListOptions{LabelSelector: fenv.Selector})
		ready := 0
		if err == nil {
			for _, p := range list.Items {
				if p.DeletionTimestamp != nil {
					continue
				}
				for _, c := range p.Status.Conditions {
					if c.Type == "Ready" && c.Status == "True" {
						ready++
					}
				}
			}
		}
		if ready == n && err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d ready target pods after %s, want %d (err %v)", ready, within, n, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitRolledOut waits until the target Deployment's rollout is complete: every replica updated,
// ready and no old one left.
func waitRolledOut(t *testing.T, ctx context.Context, fenv faults.Env, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		d, err := fenv.Client.AppsV1().Deployments(fenv.Namespace).Get(ctx, fenv.Deployment, metav1.GetOptions{})
		if err == nil && d.Status.ObservedGeneration >= d.Generation && d.Spec.Replicas != nil &&
			d.Status.UpdatedReplicas == *d.Spec.Replicas && d.Status.Replicas == *d.Spec.Replicas &&
			d.Status.ReadyReplicas == *d.Spec.Replicas {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("rollout of %s not complete after %s: %+v (err %v)", fenv.Deployment, within, d.Status, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestIntegrationDBFaults injects db-latency, db-timeout and db-down through toxiproxy on the real
// cluster, proves each with a round trip to PostgreSQL through the proxy, and proves recovery.
func TestIntegrationDBFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, fenv, _ := fixture(t, ctx)
	for _, spec := range []faults.Spec{
		{Type: faults.TypeDBLatency, Name: "latency", Params: map[string]string{"latency": "1500ms"}},
		{Type: faults.TypeDBTimeout, Name: "timeout"},
		{Type: faults.TypeDBDown, Name: "down"},
	} {
		f := build(t, fenv, spec)
		if err := f.Inject(ctx); err != nil {
			f.Revert(context.WithoutCancel(ctx)) // a half-applied inject is reverted too
			t.Fatal(err)
		}
		during := lastObserve(t, fenv.Timeline, spec.Name)
		if err := f.Revert(ctx); err != nil {
			t.Fatal(err)
		}
		mustConfirm(t, during, timeline.PhaseDuring)
		if spec.Type == faults.TypeDBLatency {
			if ms, _ := strconv.ParseFloat(during.Params["latency_ms"], 64); ms < 1500 {
				t.Fatalf("round trip %vms under a 1500ms latency toxic", ms)
			}
		}
		mustConfirm(t, lastObserve(t, fenv.Timeline, spec.Name), timeline.PhaseAfter)
	}
}

// TestIntegrationStall stalls one pod's worker loop through a port-forward to its admin port, sees
// its heartbeat go stale, and sees it fresh again after the stall.
func TestIntegrationStall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, fenv, _ := fixture(t, ctx)
	f := build(t, fenv, faults.Spec{Type: faults.TypeStall, Name: "stall", Duration: 4 * time.Second})
	if err := f.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	mustConfirm(t, lastObserve(t, fenv.Timeline, "stall"), timeline.PhaseDuring)
	time.Sleep(3 * time.Second)
	if err := f.Revert(ctx); err != nil {
		t.Fatal(err)
	}
	mustConfirm(t, lastObserve(t, fenv.Timeline, "stall"), timeline.PhaseAfter)
}

// TestIntegrationFreeze SIGSTOPs one target container's process through the node's container
// runtime, sees it stopped in /proc, resumes it and sees it running again.
func TestIntegrationFreeze(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, fenv, _ := fixture(t, ctx)
	f := build(t, fenv, faults.Spec{Type: faults.TypeFreeze, Name: "freeze", Duration: 3 * time.Second})
	defer f.Revert(context.WithoutCancel(ctx)) // Revert is idempotent: this one acts only after a failure
	if err := f.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	mustConfirm(t, lastObserve(t, fenv.Timeline, "freeze"), timeline.PhaseDuring)
	time.Sleep(2 * time.Second)
	if err := f.Revert(ctx); err != nil {
		t.Fatal(err)
	}
	after := lastObserve(t, fenv.Timeline, "freeze")
	mustConfirm(t, after, timeline.PhaseAfter)
	if strings.HasPrefix(after.Params["state"], "T") {
		t.Fatalf("process still stopped: %v", after.Params)
	}
	waitReady(t, ctx, fenv, 3, time.Minute)
}

// TestIntegrationPodDeleteEvictRollingUpdate deletes a pod with a chosen grace period, is refused
// an eviction by a PodDisruptionBudget (429), evicts once the budget allows it, rolls the
// Deployment, and waits for three ready pods after each.
func TestIntegrationPodDeleteEvictRollingUpdate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	env, fenv, _ := fixture(t, ctx)

	del := build(t, fenv, faults.Spec{Type: faults.TypePodDelete, Name: "delete", Params: map[string]string{"grace": "5s"}})
	if err := del.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	obs := lastObserve(t, fenv.Timeline, "delete")
	mustConfirm(t, obs, "")
	if obs.Params["grace_s"] != "5" && !strings.Contains(obs.Detail, "gone") {
		t.Fatalf("pod-delete observed grace %q, want 5", obs.Params["grace_s"])
	}
	waitReady(t, ctx, fenv, 3, 2*time.Minute)

	// The fixture's own budget (maxUnavailable 1) is tightened to refuse every eviction: a second
	// budget over the same pods would make the Eviction API fail instead of refusing.
	all := intstr.FromInt32(3)
	pdbs := env.Client.PolicyV1().PodDisruptionBudgets(fenv.Namespace)
	pdb, err := pdbs.Get(ctx, "target", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the fixture's PodDisruptionBudget: %v", err)
	}
	// The shared install gets its own budget back at the end, whatever happened here.
	orig := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: pdb.Name, Labels: pdb.Labels}, Spec: *pdb.Spec.DeepCopy()}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = pdbs.Delete(ctx, orig.Name, metav1.DeleteOptions{})
		if _, err := pdbs.Create(ctx, orig, metav1.CreateOptions{}); err != nil {
			t.Errorf("restore the fixture's PodDisruptionBudget: %v", err)
		}
	})
	pdb.Spec.MinAvailable, pdb.Spec.MaxUnavailable = &all, nil
	if _, err := pdbs.Update(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The disruption controller must have computed the budget before it refuses anything.
	time.Sleep(3 * time.Second)
	refused := build(t, fenv, faults.Spec{Type: faults.TypeEvict, Name: "evict-refused"}).(*faults.Evict)
	if err := refused.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	if refused.Refused() == "" {
		t.Fatal("eviction against minAvailable=3 with 3 pods was not refused")
	}
	t.Logf("refused: %s", refused.Refused())
	for _, e := range fenv.Timeline.Filter(timeline.KindFault) {
		if e.Fault.Name == "evict-refused" && e.Fault.Action != timeline.FaultSkip {
			t.Fatalf("a refused eviction wrote %s: %+v", e.Fault.Action, e.Fault)
		}
	}
	if err := env.Client.PolicyV1().PodDisruptionBudgets(fenv.Namespace).Delete(ctx, "target", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := build(t, fenv, faults.Spec{Type: faults.TypeEvict, Name: "evict"}).(*faults.Evict)
	if err := ev.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	if ev.Refused() != "" {
		t.Fatalf("eviction refused without a budget: %s", ev.Refused())
	}
	evicted := lastObserve(t, fenv.Timeline, "evict")
	mustConfirm(t, evicted, "")
	if evicted.Params["deletion_timestamp"] == "" && !strings.Contains(evicted.Detail, "gone") {
		t.Fatalf("evict proof names no deletion: %s %v", evicted.Detail, evicted.Params)
	}
	waitReady(t, ctx, fenv, 3, 2*time.Minute)

	roll := build(t, fenv, faults.Spec{Type: faults.TypeRollingUpdate, Name: "roll"})
	if err := roll.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	mustConfirm(t, lastObserve(t, fenv.Timeline, "roll"), "")
	waitRolledOut(t, ctx, fenv, 3*time.Minute)
	waitReady(t, ctx, fenv, 3, time.Minute)
}

// TestIntegrationColdStart rolls the target with a longer bootstrap, measures the first new pod
// booting for at least that long, sees the new pods carry it, and restores the old setting on revert.
func TestIntegrationColdStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	env, fenv, _ := fixture(t, ctx)
	f := build(t, fenv, faults.Spec{Type: faults.TypeColdStart, Name: "cold", Params: map[string]string{"bootstrap": "8s"}})
	if err := f.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	boot := waitObserve(t, fenv.Timeline, "cold", timeline.PhaseDuring, 2*time.Minute)
	mustConfirm(t, boot, timeline.PhaseDuring)
	if s, err := strconv.Atoi(boot.Params["boot_s"]); err != nil || s < 7 {
		t.Fatalf("new pod ready %q s after its container started, want >= 7 for an 8s bootstrap", boot.Params["boot_s"])
	}
	waitRolledOut(t, ctx, fenv, 4*time.Minute)
	waitReady(t, ctx, fenv, 3, time.Minute)
	pods, err := env.Client.CoreV1().Pods(fenv.Namespace).List(ctx, metav1.ListOptions{LabelSelector: fenv.Selector})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		found := false
		for _, e := range p.Spec.Containers[0].Env {
			found = found || (e.Name == faults.DefaultBootstrapEnv && e.Value == "8s")
		}
		if !found {
			t.Fatalf("pod %s runs without %s=8s", p.Name, faults.DefaultBootstrapEnv)
		}
	}
	if err := f.Revert(ctx); err != nil {
		t.Fatal(err)
	}
	mustConfirm(t, lastObserve(t, fenv.Timeline, "cold"), timeline.PhaseAfter)
	waitRolledOut(t, ctx, fenv, 4*time.Minute)
}

// TestIntegrationLoadAndOverload drives recorded load at the target through its published loopback
// port, raises it with the overload fault and lowers it back, and checks every request was recorded
// with its serving pod and the windows follow the rate.
func TestIntegrationLoadAndOverload(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, fenv, ep := fixture(t, ctx)
	// A fresh connection per request, so kube-proxy spreads them over every pod (kept-alive ones stay
	// with the pod they first reached).
	l, err := loadgen.Start(ctx, loadgen.Config{URL: ep.TargetURL + "/work", Rate: 40, Duration: 9 * time.Second,
		NewConnectionPerRequest: true, Timeline: fenv.Timeline})
	if err != nil {
		t.Fatal(err)
	}
	fenv.Load = l
	f := build(t, fenv, faults.Spec{Type: faults.TypeOverload, Name: "overload", Duration: 3 * time.Second, Params: map[string]string{"rate": "120"}})
	time.Sleep(3 * time.Second)
	injected := time.Now()
	if err := f.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	over := lastObserve(t, fenv.Timeline, "overload")
	mustConfirm(t, over, timeline.PhaseDuring)
	if r, err := strconv.ParseFloat(over.Params["achieved_rps"], 64); err != nil || r < 96 || over.Params["success_ratio"] == "" {
		t.Fatalf("overload proof: %s %v", over.Detail, over.Params)
	}
	time.Sleep(3*time.Second - time.Since(injected))
	if err := f.Revert(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := l.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sent %d ok %d pods %v errors %v p99 %v", rep.Sent, rep.OK, rep.ByPod, rep.Errors, rep.P99)
	if len(rep.ByPod) != 3 || rep.OK != rep.Sent || rep.Reused != 0 {
		t.Fatalf("requests reached pods %v, want all 3", rep.ByPod)
	}
	var rates []string
	peak := 0
	for _, e := range fenv.Timeline.Filter(timeline.KindLoad) {
		rates = append(rates, fmt.Sprint(e.Load.Sent))
		peak = max(peak, e.Load.Sent)
	}
	if peak < 100 || rep.Sent < 40*6+100 {
		t.Fatalf("windows %v (sent %d): the overload did not raise the rate", rates, rep.Sent)
	}
}
