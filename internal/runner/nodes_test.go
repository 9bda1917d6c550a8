package runner

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/scenario"
)

func nodesClient(names ...string) *fake.Clientset {
	cs := fake.NewSimpleClientset()
	for _, n := range names {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}
		if strings.HasSuffix(n, "control-plane") {
			node.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
		}
		_ = cs.Tracker().Add(node)
	}
	return cs
}

func TestDefaultSuiteLeavesOutWhatTheNodesCannotTake(t *testing.T) {
	scs := []*scenario.Scenario{{Name: "pod-delete"}, {Name: "node-drain", Target: scenario.Target{Nodes: 2}}}
	// A control plane with one worker: one schedulable node.
	c := &cluster.Conn{Client: nodesClient("kind-control-plane", "kind-worker")}
	got, err := withinNodes(context.Background(), c, scs, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil || len(got) != 1 || got[0].Name != "pod-delete" {
		t.Fatalf("one schedulable node: %v, %v; want pod-delete only", names(got), err)
	}
	c = &cluster.Conn{Client: nodesClient("kind-control-plane", "kind-worker", "kind-worker2")}
	if got, _ := withinNodes(context.Background(), c, scs, slog.New(slog.NewTextHandler(io.Discard, nil))); len(got) != 2 {
		t.Errorf("two schedulable nodes: %v, want both", names(got))
	}
	r := &Runner{Conn: &cluster.Conn{Client: nodesClient("kind-control-plane")}}
	why, err := r.lacksNodes(context.Background(), scs[1])
	if err != nil || !strings.Contains(why, "needs 2 schedulable nodes; the cluster has 0") {
		t.Errorf("named on a cluster without workers: %q, %v", why, err)
	}
}

func names(scs []*scenario.Scenario) []string {
	var out []string
	for _, s := range scs {
		out = append(out, s.Name)
	}
	return out
}
