package verdict_test

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// nodeLoss is a node-loss fault on node n (pods a and b) from 5 s to end, with the default
// node-health timing: window [40s, 55s] + 2s propagation after 5 s = 45–62 s.
func nodeLoss(end time.Duration, pods ...string) timeline.FaultWindow {
	h := oracle.NodeHealth{GracePeriod: 50 * s, MonitorPeriod: 5 * s, LeaseDuration: 40 * s, Source: "test"}
	p := h.Params()
	p["node"] = "n"
	return timeline.FaultWindow{Name: "faults[0]", Type: "node-loss", Target: "node/n", Pods: pods, Start: 5 * s, End: end,
		Reverted: true, Effect: timeline.EffectConfirmed, Params: p}
}

func TestWithdrawnAfterNodeLoss(t *testing.T) {
	run := func() *vt.Builder {
		return vt.New().Oracle(vt.DefaultOracle()).Ready(0, "a", "b", "c").Traffic(s, 80*s, 20)
	}
	cases := []struct {
		name     string
		b        *vt.Builder
		want     verdict.Status
		evidence string
	}{
		{"both in window", run().NotReady(50*s, "a", "b").Faults(nodeLoss(65*s, "a", "b")), verdict.Pass, "a left rotation 45s after node n stopped (in window)"},
		{"one early", run().NotReady(20*s, "a").NotReady(50*s, "b").Faults(nodeLoss(65*s, "a", "b")), verdict.Fail, "EARLIER than the node controller"},
		{"one late", run().NotReady(50*s, "a").NotReady(64*s, "b").Faults(nodeLoss(70*s, "a", "b")), verdict.Fail, "LATE (deadline 57s)"},
		{"never withdrawn", run().Faults(nodeLoss(70*s, "a", "b")), verdict.Fail, "stayed in rotation"},
		{"back before the deadline", run().Faults(nodeLoss(30*s, "a")), verdict.Inconclusive, ""},
		{"no pod of the lost node seen", run().Faults(nodeLoss(65 * s)), verdict.Inconclusive, ""},
		{"other faults are not judged", run().NotReady(50*s, "a").Faults(nodeLoss(65*s, "a"),
			timeline.FaultWindow{Name: "faults[1]", Type: "stall", Pods: []string{"b"}, Start: 5 * s, End: 65 * s, Reverted: true, Effect: timeline.EffectConfirmed}),
			verdict.Pass, "a left rotation 45s after node n stopped (in window)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := verdict.Evaluate(c.b.Input(), verdict.Spec{Rule: "withdrawn-after-node-loss"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.want {
				t.Fatalf("%s, want %s: %s %v", res.Status, c.want, res.Observed, res.Unshown)
			}
			checkEvidence(t, res, c.evidence)
		})
	}
}

// checkEvidence fails t unless some evidence note of res contains want ("" wants nothing).
func checkEvidence(t *testing.T, res verdict.Result, want string) {
	t.Helper()
	if want == "" {
		return
	}
	for _, e := range res.Evidence {
		if strings.Contains(e.Note, want) {
			return
		}
	}
	t.Errorf("no evidence %q in %+v", want, res.Evidence)
}

func TestWithdrawnAfterNodeLossNeedsTheRecordedTiming(t *testing.T) {
	f := nodeLoss(65*s, "a")
	delete(f.Params, oracle.ParamNodeGrace)
	res, err := verdict.Evaluate(vt.New().Oracle(vt.DefaultOracle()).Ready(0, "a").NotReady(50*s, "a").Traffic(s, 80*s, 20).Faults(f).Input(),
		verdict.Spec{Rule: "withdrawn-after-node-loss"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != verdict.Inconclusive {
		t.Errorf("without the cluster's timing: %s, want INCONCLUSIVE (%s)", res.Status, res.Observed)
	}
}
