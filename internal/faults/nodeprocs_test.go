package faults

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/probegate/probegate/internal/nodeagent"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/loadgen/agent"
)

const frozenID = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// agentNode is one node as its node agent sees it: a fake proc tree with a shim (pid 50) and the
// target container's init (4343) and child (4344), served by a real nodeagent.Server whose kill
// writes the signal's effect into the tree.
type agentNode struct {
	root  string
	sent  []string
	procs AgentProcs
}

func newAgentNode(t *testing.T, node string) *agentNode {
	t.Helper()
	n := &agentNode{root: t.TempDir()}
	n.proc(t, 50, 1, "/system.slice/containerd.service")
	n.proc(t, 4343, 50, "/kubepods/pod1/"+frozenID)
	n.proc(t, 4344, 4343, "/kubepods/pod1/"+frozenID)
	srv := &nodeagent.Server{Procs: nodeagent.Procs{Root: n.root}, Kill: n.kill, Self: 7}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	n.procs = AgentProcs{node: {Pod: "probegate-node-agent-x", Client: nodeagent.Client{T: agent.HTTPTransport{Base: hs.URL}}}}
	return n
}

func (n *agentNode) proc(t *testing.T, pid, ppid int, cgroup string) {
	t.Helper()
	dir := filepath.Join(n.root, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (p) S %d %s%d 0\n", pid, ppid, strings.Repeat("0 ", 17), pid)
	for name, body := range map[string]string{"stat": stat, "cgroup": "0::" + cgroup + "\n", "status": "State:\tS (sleeping)\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func (n *agentNode) kill(pid int, sig syscall.Signal) error {
	n.sent = append(n.sent, fmt.Sprintf("%d %v", pid, sig))
	state := map[syscall.Signal]string{syscall.SIGSTOP: "T (stopped)", syscall.SIGCONT: "S (sleeping)"}[sig]
	return os.WriteFile(filepath.Join(n.root, strconv.Itoa(pid), "status"), []byte("State:\t"+state+"\n"), 0o644)
}

// frozenTarget is the fake target with target-b's container given a real runtime ID.
func frozenTarget(t *testing.T) *fake.Clientset {
	t.Helper()
	cs := fakeTarget()
	pods := cs.CoreV1().Pods("ns")
	p, err := pods.Get(context.Background(), "target-b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.ContainerStatuses[0].ContainerID = "containerd://" + frozenID
	if _, err := pods.UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestFreezeThroughTheNodeAgent(t *testing.T) {
	n := newAgentNode(t, podNode("target-b"))
	tl := timeline.New(time.Now())
	c := choice(frozenTarget(t), 0)
	c.Pod = "target-b"
	f := NewFreeze(Recorder{Timeline: tl, Name: "faults[0]"}, c, "", n.procs)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := f.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(n.sent, "|"), "4343 stopped (signal)|4344 stopped (signal)|4344 continued|4343 continued"; got != want {
		t.Fatalf("signals %q, want %q (the container's init and its child)", got, want)
	}
	var got []string
	for _, e := range tl.Filter(timeline.KindFault) {
		got = append(got, e.Fault.Action+"/"+e.Fault.Params["state"]+"/"+e.Fault.Params["effect"])
	}
	if strings.Join(got, " ") != "inject// observe/T (stopped)/confirmed revert// observe/S (sleeping)/confirmed" {
		t.Fatalf("actions = %v", got)
	}
	inj := tl.Filter(timeline.KindFault)[0].Fault
	if inj.Params["via"] != "node agent probegate-node-agent-x" ||
		inj.Detail != "SIGSTOP to every process of container target (pids 4343 4344 on node kind-worker2, the main one 4343; through node agent probegate-node-agent-x)" {
		t.Fatalf("inject = %+v", inj)
	}
}

func TestFreezeThroughTheNodeAgentWhenTheProcessIsGone(t *testing.T) {
	n := newAgentNode(t, podNode("target-b"))
	tl := timeline.New(time.Now())
	c := choice(frozenTarget(t), 0)
	c.Pod = "target-b"
	f := NewFreeze(Recorder{Timeline: tl}, c, "", n.procs)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	// kubelet killed the frozen container: its processes are gone from the node.
	for _, pid := range []string{"4343", "4344"} {
		if err := os.RemoveAll(filepath.Join(n.root, pid)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Revert(context.Background()); err != nil {
		t.Fatalf("revert after the process died: %v", err)
	}
	acts := tl.Filter(timeline.KindFault)
	if last := acts[len(acts)-1].Fault; last.Action != timeline.FaultRevert || !strings.Contains(last.Detail, "gone") {
		t.Fatalf("last action = %+v", last)
	}
	if f.injected {
		t.Fatal("still injected after a revert of a gone process")
	}
}

func TestFreezeWithoutAnAgentOnThePodsNode(t *testing.T) {
	n := newAgentNode(t, "some-other-node")
	c := choice(frozenTarget(t), 0)
	c.Pod = "target-b"
	f := NewFreeze(Recorder{Timeline: timeline.New(time.Now())}, c, "", n.procs)
	if err := f.Inject(context.Background()); err == nil || !strings.Contains(err.Error(), "no node agent runs on node kind-worker2") {
		t.Fatalf("inject without an agent on the node: %v", err)
	}
	if f.injected || len(n.sent) > 0 {
		t.Fatalf("injected %v, signals %v", f.injected, n.sent)
	}
}

func TestFreezeIsSkippedWithoutNodeAccess(t *testing.T) {
	spec := Spec{Type: TypeFreeze}
	env := Env{Client: fake.NewSimpleClientset(&corev1.Pod{}), Namespace: "ns", Selector: "app=target"}
	if f, skip, err := Build(spec, env); f != nil || err != nil || !strings.Contains(skip, "neither a local kind node container nor probegate's node agent") {
		t.Fatalf("freeze without node access: fault %v, skip %q, err %v", f, skip, err)
	}
	env.NodeProcs = AgentProcs{}
	if f, skip, err := Build(spec, env); f == nil || err != nil || skip != "" {
		t.Fatalf("freeze with node agents: fault %v, skip %q, err %v", f, skip, err)
	}
}

func TestStopKubeletThroughTheNodeAgent(t *testing.T) {
	n := newAgentNode(t, "kind-worker2")
	n.proc(t, 60, 1, "/system.slice/kubelet.service")
	if err := os.WriteFile(filepath.Join(n.root, "60", "comm"), []byte("kubelet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, stop := range []bool{true, false} {
		if err := n.procs.StopKubelet(context.Background(), "kind-worker2", stop); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := strings.Join(n.sent, "|"), "60 stopped (signal)|60 continued"; got != want {
		t.Fatalf("signals %q, want %q (kubelet stopped, then resumed)", got, want)
	}
	if err := n.procs.StopKubelet(context.Background(), "kind-worker", true); err == nil || !strings.Contains(err.Error(), "no node agent runs on node kind-worker") {
		t.Errorf("a node without an agent: %v", err)
	}
}
