package verdict_test

import (
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

func TestReadyInEveryZone(t *testing.T) {
	twoZones := []timeline.NodeZone{{Node: "w1", Zone: "zone-a"}, {Node: "w2", Zone: "zone-b"}}
	// a and b on w1 (zone-a), c on w2 (zone-b); d, a rollout's new pod, comes up on w2.
	run := func(nodes ...timeline.NodeZone) *vt.Builder {
		return vt.New().Placement(nodes...).OnNode("w1", "a", "b").OnNode("w2", "c", "d").Ready(0, "a", "b", "c").Traffic(s, 60*s, 10)
	}
	cases := []struct {
		name     string
		b        *vt.Builder
		want     verdict.Status
		evidence string
		observed string
	}{
		{"spread rollout", run(twoZones...).Ready(10*s, "d").Terminating(12*s, "c").Terminating(20*s, "a"), verdict.Pass, "", "zone-a lowest 1; zone-b lowest 1"},
		{"a zone emptied before its new pod was ready", run(twoZones...).Terminating(10*s, "c").Ready(14*s, "d"), verdict.Fail,
			"zone zone-b: 0 ready (none) after c's endpoint changed, for 4s", "zone-b lowest 0 (below 1 for 4s in 1 dips, longest 4s)"},
		{"every replica in one zone", vt.New().Placement(twoZones...).OnNode("w1", "a", "b", "c").Ready(0, "a", "b", "c").Traffic(s, 60*s, 10), verdict.Fail,
			"zone zone-b: 0 ready (none) when the load started", "zone-b lowest 0"},
		{"the slice's zone wins over the placement's", vt.New().Placement(twoZones...).OnNode("w1", "a").Ready(0, "a").
			Entry(timeline.Entry{Kind: timeline.KindEndpoint, Pod: "z", Endpoint: &timeline.EndpointTransition{Change: timeline.EndpointAdded,
				Address: "10.0.0.9", Node: "w1", Zone: "zone-b", To: &timeline.EndpointState{Ready: true, Serving: true}}}).
			Traffic(s, 60*s, 10), verdict.Pass, "", "zone-a lowest 1; zone-b lowest 1"},
		{"one zone", run(timeline.NodeZone{Node: "w1", Zone: "zone-a"}, timeline.NodeZone{Node: "w2", Zone: "zone-a"}), verdict.Inconclusive, "", "span 1 zone(s)"},
		{"no zone labels", run(timeline.NodeZone{Node: "w1"}, timeline.NodeZone{Node: "w2"}), verdict.Inconclusive, "", "2 without a topology.kubernetes.io/zone label"},
		{"no placement recorded", vt.New().Ready(0, "a").Traffic(s, 60*s, 10), verdict.Inconclusive, "", "records no placement"},
		{"min 2 per zone", run(twoZones...), verdict.Fail, "zone zone-b: 1 ready (c) when the load started", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := verdict.Spec{Rule: "ready-in-every-zone"}
			if strings.HasPrefix(c.name, "min 2") {
				spec.Params = map[string]string{"min": "2"}
			}
			res, err := verdict.Evaluate(c.b.Input(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.want {
				t.Fatalf("%s, want %s: %s %v", res.Status, c.want, res.Observed, res.Unshown)
			}
			if !strings.Contains(res.Observed, c.observed) {
				t.Errorf("observed %q, want it to contain %q", res.Observed, c.observed)
			}
			checkEvidence(t, res, c.evidence)
		})
	}
}
