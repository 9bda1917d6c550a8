package verdict_test

import (
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
)

// TestAttributionCoverageGate: the rules that read per-pod traffic are INCONCLUSIVE when fewer than
// 99 % of the requests that reached a pod name it, and judged at or above it; requests that never
// reached a pod (refused) are left out of the coverage.
func TestAttributionCoverageGate(t *testing.T) {
	// anonymise drops the pod of every nth request; refuse turns every mth into a refused request.
	edit := func(in verdict.Input, nth, refuseEvery int) verdict.Input {
		for i := range in.Requests {
			q := &in.Requests[i]
			if refuseEvery > 0 && i%refuseEvery == 1 {
				*q = timeline.Request{Seq: q.Seq, T: q.T, Start: q.Start, Error: timeline.ErrRefused}
				continue
			}
			if nth > 0 && i%nth == 0 {
				q.Pod = ""
			}
		}
		return in
	}
	cases := []struct {
		name          string
		nth, refuse   int
		inconclusive  bool
		unshownSubstr string
	}{
		{name: "all attributed", inconclusive: false},
		{name: "1 in 200 unattributed (99.5 %)", nth: 200},
		{name: "1 in 50 unattributed (98 %)", nth: 50, inconclusive: true, unshownSubstr: "below 99 %"},
		{name: "none attributed", nth: 1, inconclusive: true, unshownSubstr: "none of the"},
		// a third refused (no pod): 99.5 % of the reached requests are attributed, 66 % of all
		{name: "refused requests do not count", nth: 300, refuse: 3},
	}
	runs := map[string]func() verdict.Input{
		"no-traffic-after-withdrawal": func() verdict.Input { return base().Inject(10*s, "stall", "a").NotReady(13*s, "a").Input() },
	}
	for rule, run := range runs {
		for _, c := range cases {
			t.Run(rule+"/"+c.name, func(t *testing.T) {
				in := edit(run(), c.nth, c.refuse)
				res, err := verdict.Evaluate(in, verdict.Spec{Rule: rule})
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Status == verdict.Inconclusive; got != c.inconclusive {
					t.Fatalf("status %s (%s; unshown %q), want inconclusive=%v", res.Status, res.Observed, res.Unshown, c.inconclusive)
				}
				if c.unshownSubstr != "" && !strings.Contains(strings.Join(res.Unshown, "\n"), c.unshownSubstr) {
					t.Fatalf("unshown %q lacks %q", res.Unshown, c.unshownSubstr)
				}
			})
		}
	}
}
