package runner

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/nodeagent"
	"github.com/probegate/probegate/internal/scenario"
)

// fakeDaemonSetController plays the DaemonSet controller and kubelets for the node agent on nodes:
// once the DaemonSet exists it counts the nodes and creates one pod per node, each made ready
// (in turn, a poll apart) unless stuck says how it fails.
func fakeDaemonSetController(t *testing.T, cs kubernetes.Interface, ns string, nodes []string, stuck *corev1.ContainerStateWaiting) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { cancel(); wg.Wait() })
	go func() {
		defer wg.Done()
		var ds *appsv1.DaemonSet
		for ds == nil {
			if ctx.Err() != nil {
				return
			}
			got, err := cs.AppsV1().DaemonSets(ns).Get(ctx, nodeAgentName, metav1.GetOptions{})
			if err == nil {
				ds = got
			}
			time.Sleep(5 * time.Millisecond)
		}
		ds.Status.DesiredNumberScheduled = int32(len(nodes))
		ds.Status.ObservedGeneration = ds.Generation
		if _, err := cs.AppsV1().DaemonSets(ns).UpdateStatus(ctx, ds, metav1.UpdateOptions{}); err != nil {
			t.Error(err)
			return
		}
		for _, node := range nodes {
			time.Sleep(20 * time.Millisecond)
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: nodeAgentName + "-" + node, Namespace: ns, Labels: ds.Spec.Template.Labels},
				Spec:       *ds.Spec.Template.Spec.DeepCopy(),
			}
			p.Spec.NodeName = node
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			if stuck != nil {
				p.Status.Phase = corev1.PodPending
				p.Status.Conditions = nil
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "node-agent", State: corev1.ContainerState{Waiting: stuck}}}
			}
			if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
}

func testAgents(cs kubernetes.Interface, progress func(int, int)) nodeAgents {
	return nodeAgents{client: cs, ns: "ns", image: "probegate/agent:dev", log: slog.New(slog.DiscardHandler),
		timeout: 5 * time.Second, poll: 10 * time.Millisecond, progress: progress}
}

func TestNodeAgentsRunOnEveryNodeAndAreRemoved(t *testing.T) {
	cs := fake.NewClientset()
	fakeDaemonSetController(t, cs, "ns", []string{"n1", "n2", "n3"}, nil)
	var seen []int
	a := testAgents(cs, func(ready, want int) { seen = append(seen, ready) })
	procs, err := a.start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := describeAgents(procs); got != "probegate-node-agent-n1@n1, probegate-node-agent-n2@n2, probegate-node-agent-n3@n3" {
		t.Fatalf("agents %s", got)
	}
	if len(seen) == 0 || seen[len(seen)-1] >= 3 {
		t.Errorf("progress while waiting: %v", seen)
	}
	// Each agent is reached through its pod's proxy on the node agent's port, with the token the
	// DaemonSet's pods were given.
	ds, err := cs.AppsV1().DaemonSets("ns").Get(context.Background(), nodeAgentName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pp, ok := procs["n2"].Client.T.(podProxy)
	token := ds.Spec.Template.Spec.Containers[0].Env[0].Value
	if !ok || pp.pod != "probegate-node-agent-n2" || pp.port != nodeagent.Port || len(token) != 32 || pp.header[nodeagent.TokenHeader] != token {
		t.Errorf("transport to n2 = %+v (token %q)", procs["n2"].Client.T, token)
	}
	spec := ds.Spec.Template.Spec
	c := spec.Containers[0]
	if !spec.HostPID || c.SecurityContext == nil || !*c.SecurityContext.Privileged || *c.SecurityContext.RunAsUser != 0 ||
		len(spec.Tolerations) != 1 || spec.Tolerations[0].Operator != corev1.TolerationOpExists || spec.Tolerations[0].Key != "" ||
		*spec.AutomountServiceAccountToken || c.Image != "probegate/agent:dev" || strings.Join(c.Args, " ") != "-node" ||
		c.Env[0].Name != nodeagent.TokenEnv {
		t.Errorf("DaemonSet pod spec = %+v", spec)
	}

	a.remove(context.Background())
	if _, err := cs.AppsV1().DaemonSets("ns").Get(context.Background(), nodeAgentName, metav1.GetOptions{}); err == nil {
		t.Error("the DaemonSet is still there")
	}
	if pods, _ := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{}); len(pods.Items) > 0 {
		t.Errorf("%d node agent pods left", len(pods.Items))
	}
}

func TestNodeAgentsFailEarlySayingWhy(t *testing.T) {
	cs := fake.NewClientset()
	fakeDaemonSetController(t, cs, "ns", []string{"n1"}, &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: "image not present with pull policy of Never"})
	start := time.Now()
	_, err := testAgents(cs, nil).start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "ErrImageNeverPull") || !strings.Contains(err.Error(), "is probegate/agent:dev on the nodes?") {
		t.Fatalf("stuck pod: %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("took %v: the failure was not seen before the timeout", time.Since(start))
	}

	cs = fake.NewClientset(&corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "ev", Namespace: "ns"},
		InvolvedObject: corev1.ObjectReference{Kind: "DaemonSet", Name: nodeAgentName, Namespace: "ns"},
		Reason:         "FailedCreate",
		Message:        `Error creating: pods "x" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostPID=true), privileged`,
	})
	_, err = testAgents(cs, nil).start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "violates PodSecurity") || !strings.Contains(err.Error(), "pod-security.kubernetes.io/enforce=privileged") {
		t.Fatalf("refused pods: %v", err)
	}

	cs = fake.NewClientset()
	a := testAgents(cs, nil)
	a.timeout = 50 * time.Millisecond
	if _, err := a.start(context.Background()); err == nil || !strings.Contains(err.Error(), "0 of 0 pods") {
		t.Fatalf("no pods at all: %v", err)
	}
}

// A scenario that needs a node's processes on a cluster without node containers gets the node
// agent, in a namespace that admits it; its faults get the agents; the DaemonSet is deleted after
// the faults were reverted.
func TestRunStartsTheNodeAgentOnlyForNodeFaults(t *testing.T) {
	r, j, _, _ := newTestRunner(t)
	cs := r.Conn.Client.(*fake.Clientset)
	var got faults.NodeProcs
	r.kit.faults = &nodeFaults{fakeFaults: r.kit.faults.(*fakeFaults), got: &got}
	cs.PrependReactor("delete", "daemonsets", func(k8stesting.Action) (bool, runtime.Object, error) {
		j.add("delete-ds")
		return false, nil, nil
	})
	var nsLabels map[string]string
	cs.PrependReactor("create", "namespaces", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ns := a.(k8stesting.CreateAction).GetObject().(*corev1.Namespace)
		nsLabels = ns.Labels
		fakeDaemonSetController(t, cs, ns.Name, []string{"n1", "n2"}, nil)
		return false, nil, nil
	})
	sc := testScenario("process-freeze")
	sc.Faults = []scenario.Fault{{Type: faults.TypeFreeze, At: 50 * time.Millisecond, Duration: 100 * time.Millisecond}}
	if _, err := r.Run(context.Background(), sc, 0); err != nil {
		t.Fatal(err)
	}
	if ap, ok := got.(faults.AgentProcs); !ok || len(ap) != 2 {
		t.Fatalf("the freeze got node access %#v, want the 2 node agents", got)
	}
	if nsLabels[podSecurityEnforce] != "privileged" {
		t.Errorf("namespace labels %v", nsLabels)
	}
	if s := j.String(); s != "+freeze -freeze delete-ds" {
		t.Errorf("calls %q, want the revert before the DaemonSet's deletion", s)
	}

	// No node fault, or node containers at hand: no DaemonSet.
	r, j, _, _ = newTestRunner(t)
	cs = r.Conn.Client.(*fake.Clientset)
	cs.PrependReactor("create", "daemonsets", func(k8stesting.Action) (bool, runtime.Object, error) {
		j.add("create-ds")
		return false, nil, nil
	})
	if _, err := r.Run(context.Background(), testScenario("db-slowness"), 0); err != nil {
		t.Fatal(err)
	}
	r.kit.nodeExecOn = func(context.Context, string, ...string) ([]byte, error) { return nil, io.EOF }
	got = nil
	r.kit.faults = &nodeFaults{fakeFaults: r.kit.faults.(*fakeFaults), got: &got}
	if _, err := r.Run(context.Background(), sc, 0); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(j.String(), "create-ds") {
		t.Errorf("a DaemonSet was created: %s", j.String())
	}
	if got == nil {
		t.Error("on kind the freeze got no node access")
	}
}

// nodeFaults builds fakes and keeps the node access the faults were given.
type nodeFaults struct {
	*fakeFaults
	got *faults.NodeProcs
}

func (f *nodeFaults) Build(spec scenario.Fault, env faultEnv) (faults.Fault, string, error) {
	*f.got = env.NodeProcs
	return f.fakeFaults.Build(spec, env)
}

// A cold start uses node access when it has it (each new container stopped at start), so the run
// provides it; a pod deletion does not.
func TestNeedsNodeAccessForAColdStart(t *testing.T) {
	cold := &scenario.Scenario{Faults: []scenario.Fault{{Type: "cold-start", Params: map[string]string{"bootstrap": "25s", "stop": "true"}}}}
	if !needsNodeAccess(cold) {
		t.Error("a cold start gets no node access: its stop mode would fall back to the CPU limit")
	}
	if needsNodeAccess(&scenario.Scenario{Faults: []scenario.Fault{{Type: "pod-delete"}}}) {
		t.Error("a pod deletion asks for node access")
	}
}
