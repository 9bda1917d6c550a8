package runner

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/verdict"
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

func TestTooFewNodes(t *testing.T) {
	sc := &scenario.Scenario{Name: "node-drain", Target: scenario.Target{Nodes: 2}}
	// A control plane with one worker: one schedulable node.
	r := &Runner{Conn: &cluster.Conn{Client: nodesClient("kind-control-plane", "kind-worker")}}
	why, err := r.lacksNodes(context.Background(), sc)
	if err != nil || !strings.Contains(why, "needs 2 schedulable nodes; the cluster has 1") {
		t.Errorf("one schedulable node: %q, %v", why, err)
	}
	r = &Runner{Conn: &cluster.Conn{Client: nodesClient("kind-control-plane", "kind-worker", "kind-worker2")}}
	if why, err := r.lacksNodes(context.Background(), sc); why != "" || err != nil {
		t.Errorf("two schedulable nodes: %q, %v; want none missing", why, err)
	}
	r = &Runner{Conn: &cluster.Conn{Client: nodesClient("kind-control-plane")}}
	why, err = r.lacksNodes(context.Background(), sc)
	if err != nil || !strings.Contains(why, "needs 2 schedulable nodes; the cluster has 0") {
		t.Errorf("a cluster without workers: %q, %v", why, err)
	}
}

func names(scs []*scenario.Scenario) []string {
	var out []string
	for _, s := range scs {
		out = append(out, s.Name)
	}
	return out
}

// A multi-node scenario on one node: the default suite lists it NOT APPLICABLE (nothing deployed,
// not counted in the exit code); named by the user it is INCONCLUSIVE, saying why.
func TestTooFewNodesDefaultSuiteNotApplicableNamedInconclusive(t *testing.T) {
	for _, defaultSuite := range []bool{true, false} {
		r, j, d, _ := newTestRunner(t)
		r.Conn.Client = nodesClient("kind-control-plane")
		r.Opts.DefaultSuite = defaultSuite
		sc := testScenario("node-drain")
		sc.Target.Nodes = 2
		rep, err := r.Run(context.Background(), sc, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.requests) != 0 || j.String() != "" {
			t.Errorf("default suite %v: deployed %d, faults %q; want nothing", defaultSuite, len(d.requests), j.String())
		}
		want := verdict.Inconclusive
		if defaultSuite {
			want = verdict.NotApplicable
		}
		if rep.Status() != want || len(rep.Verdicts) != len(sc.Expect) {
			t.Errorf("default suite %v: status %s with %d verdicts, want %s with %d", defaultSuite, rep.Status(), len(rep.Verdicts), want, len(sc.Expect))
		}
		if defaultSuite && !strings.Contains(rep.NotApplicable, "needs 2 schedulable nodes") {
			t.Errorf("not applicable without the reason: %q", rep.NotApplicable)
		}
	}
}
