package verdict_test

import (
	"math"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// Issue 29: each rule carries the quantity it judged and its bound as data, so a comparison of two
// runs can follow it before the verdict turns.
func TestRulesCarryTheirMeasure(t *testing.T) {
	twoZones := []timeline.NodeZone{{Node: "w1", Zone: "zone-a"}, {Node: "w2", Zone: "zone-b"}}
	churn := flapping(proven).NotReady(12*s, "b", "c").Ready(14*s, "b", "c").NotReady(20*s, "b", "c").Ready(46*s, "b", "c")
	shed := overloadRun(func(_, i int) (int, time.Duration) {
		if i%8 < 3 {
			return 200, 200 * time.Millisecond
		}
		return 503, 2 * time.Millisecond
	})
	cases := []struct {
		rule   string
		params map[string]string
		in     verdict.Input
		want   verdict.Measure
	}{
		{"terminating-before-exit", nil,
			base().Deleting(10*s, "a", 10*s).Terminating(ms(10800), "a").Exited(13*s, "a", 0).Removed(ms(13200), "a").Input(),
			verdict.Measure{Name: "withdrawal lead before exit", Value: 2.2, Unit: "s", Bound: 2, Direction: verdict.AtLeast}},
		// Two pods: the measure is the one with the least headroom (b's 1.5 s lead), not the first.
		{"terminating-before-exit", map[string]string{"min-lead": "1s"},
			base().Deleting(10*s, "a", 10*s).Terminating(ms(10800), "a").Exited(13*s, "a", 0).
				Deleting(10*s, "b", 10*s).Terminating(ms(10500), "b").Exited(12*s, "b", 0).Input(),
			verdict.Measure{Name: "withdrawal lead before exit", Value: 1.5, Unit: "s", Bound: 1, Direction: verdict.AtLeast}},
		{"readiness-withdrawn-in-window", nil, base().Inject(10*s, "stall", "a").NotReady(13*s, "a").Input(),
			verdict.Measure{Name: "readiness withdrawal after the fault", Value: 3, Unit: "s", Bound: 5, Direction: verdict.AtMost}},
		{"liveness-restart-in-window", nil,
			base().Inject(10*s, "stall", "a").NotReady(13*s, "a").Restart(22*s, "a", timeline.CauseLiveness).Ready(25*s, "a").Input(),
			verdict.Measure{Name: "liveness restart after the fault", Value: 12, Unit: "s", Bound: 17, Direction: verdict.AtMost}},
		{"recovery-within", nil,
			base().Inject(10*s, "db-latency", "").NotReady(12*s, "a").Revert(20*s, "db-latency", "").Ready(22*s, "a").Input(),
			verdict.Measure{Name: "recovery time", Value: 2, Unit: "s", Bound: 4, Direction: verdict.AtMost}},
		{"failed-requests-budget", map[string]string{"max": "6"}, failures().Input(),
			verdict.Measure{Name: "failed requests", Value: 6, Unit: "requests", Bound: 6, Direction: verdict.AtMost}},
		{"failed-requests-budget", map[string]string{"max": "100", "max-ratio": "0.01"}, failures().Input(),
			verdict.Measure{Name: "failed/sent", Value: 6.0 / 1172, Unit: "ratio", Bound: 0.01, Direction: verdict.AtMost}},
		{"no-traffic-after-withdrawal", map[string]string{"max": "2"}, base().NotReady(13*s, "a").OK(16*s, "a").Ready(25*s, "a").Input(),
			verdict.Measure{Name: "requests to a withdrawn pod after routing stopped", Value: 1, Unit: "requests", Bound: 2, Direction: verdict.AtMost}},
		{"min-ready-endpoints", nil, base().NotReady(13*s, "a").Ready(25*s, "a").Input(),
			verdict.Measure{Name: "lowest ready endpoints", Value: 2, Unit: "endpoints", Bound: 1, Direction: verdict.AtLeast}},
		{"ready-in-every-zone", nil,
			vt.New().Placement(twoZones...).OnNode("w1", "a", "b").OnNode("w2", "c", "d").Ready(0, "a", "b", "c").Traffic(s, 60*s, 10).
				Ready(10*s, "d").Terminating(12*s, "c").Terminating(20*s, "a").Input(),
			verdict.Measure{Name: "lowest ready endpoints in a zone", Value: 1, Unit: "endpoints", Bound: 1, Direction: verdict.AtLeast}},
		{"no-liveness-restarts", nil, base().Restart(20*s, "b", timeline.CauseLiveness).Input(),
			verdict.Measure{Name: "liveness restarts", Value: 1, Unit: "restarts", Bound: 0, Direction: verdict.AtMost}},
		{"no-unexpected-restarts", nil, base().Restart(15*s, "b", timeline.CauseOOM).Input(),
			verdict.Measure{Name: "unexpected restarts", Value: 1, Unit: "restarts", Bound: 0, Direction: verdict.AtMost}},
		{"no-endpoint-churn", nil, churn.Input(),
			verdict.Measure{Name: "out→in→out cycles of a pod", Value: 1, Unit: "cycles", Bound: 1, Direction: verdict.AtMost}},
		{"no-forced-kill", nil, base().Deleting(10*s, "a", 10*s).Exited(13*s, "a", 0).Input(),
			verdict.Measure{Name: "exit after deletion", Value: 3, Unit: "s", Bound: 11, Direction: verdict.AtMost}},
		{"startup-not-killed", nil, base().Input(),
			verdict.Measure{Name: "slowest bootstrap", Value: 0.8, Unit: "s", Bound: 30, Direction: verdict.AtMost}},
		{"sheds-excess-load", nil, shed,
			verdict.Measure{Name: "goodput share of capacity", Value: 0.99, Unit: "ratio", Bound: 0.5, Direction: verdict.AtLeast}},
		{"withdrawn-after-node-loss", nil,
			vt.New().Oracle(vt.DefaultOracle()).Ready(0, "a", "b", "c").Traffic(s, 80*s, 20).NotReady(50*s, "a").NotReady(52*s, "b").
				Faults(nodeLoss(65*s, "a", "b")).Input(),
			verdict.Measure{Name: "withdrawal after node loss", Value: 47, Unit: "s", Bound: 57, Direction: verdict.AtMost}},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			res, err := verdict.Evaluate(c.in, verdict.Spec{Rule: c.rule, Params: c.params})
			if err != nil {
				t.Fatal(err)
			}
			m := res.Measure
			if m == nil {
				t.Fatalf("%s (%s: %s) carries no measure", c.rule, res.Status, res.Observed)
			}
			covered[c.rule] = true
			if m.Name != c.want.Name || m.Unit != c.want.Unit || m.Direction != c.want.Direction ||
				math.Abs(m.Value-c.want.Value) > 1e-3 || math.Abs(m.Bound-c.want.Bound) > 1e-3 {
				t.Errorf("measure %+v, want %+v (%s: %s)", *m, c.want, res.Status, res.Observed)
			}
			if (m.Headroom() >= 0) != (res.Status != verdict.Fail) {
				t.Errorf("headroom %v but status %s", m.Headroom(), res.Status)
			}
		})
	}
	for _, r := range verdict.Rules() {
		if !covered[r.Name] {
			t.Errorf("rule %s: no case shows its measure (every rule carries one for probegate compare)", r.Name)
		}
	}
}

func TestMeasureHeadroom(t *testing.T) {
	for _, c := range []struct {
		m    verdict.Measure
		want float64
	}{
		{verdict.Measure{Value: 3, Bound: 5, Direction: verdict.AtMost}, 2},
		{verdict.Measure{Value: 6, Bound: 5, Direction: verdict.AtMost}, -1},
		{verdict.Measure{Value: 3, Bound: 2, Direction: verdict.AtLeast}, 1},
		{verdict.Measure{Value: 1, Bound: 2, Direction: verdict.AtLeast}, -1},
	} {
		if got := c.m.Headroom(); got != c.want {
			t.Errorf("%+v: headroom %v, want %v", c.m, got, c.want)
		}
	}
	if (verdict.Measure{Direction: "up"}).Valid() {
		t.Error("direction up is valid")
	}
}
