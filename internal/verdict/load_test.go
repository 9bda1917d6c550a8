package verdict_test

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
)

// requestsAt sends rate requests a second over [from, to), each answered 200 by pod a unless failed
// says otherwise.
func requestsAt(rate float64, from, to time.Duration, failed func(i int) bool) []timeline.Request {
	var out []timeline.Request
	step := time.Duration(float64(time.Second) / rate)
	for t, i := from, 0; t < to; t, i = t+step, i+1 {
		r := timeline.Request{Seq: uint64(len(out) + 1), T: t, Latency: 5 * time.Millisecond, Status: 200, Pod: "a", PodFrom: timeline.PodFromHeader}
		if failed != nil && failed(i) {
			r.Status = 503
		}
		out = append(out, r)
	}
	return out
}

// A load that sent well below the asked rate cannot back a PASS of a rule that judges what the
// requests met: failed-requests-budget is INCONCLUSIVE, saying how thin the load was. A FAIL on a
// thinned load stands (its failed requests are real), a load at 95 % of the rate passes, and an
// overload's raised rate does not hide a thinned base load.
func TestThinnedLoadIsInconclusive(t *testing.T) {
	const s = time.Second
	load := verdict.Span{Start: 0, End: 40 * s}
	overload := timeline.FaultWindow{Name: "overload", Type: "overload", Start: 10 * s, End: 30 * s, Reverted: true, Effect: timeline.EffectConfirmed}
	for _, c := range []struct {
		name   string
		reqs   []timeline.Request
		faults []timeline.FaultWindow
		want   verdict.Status
		why    string
	}{
		{"thinned", requestsAt(12.1, 0, 40*s, nil), nil, verdict.Inconclusive, "the load sent 12.1/s of the asked 30/s"},
		{"full", requestsAt(28.5, 0, 40*s, nil), nil, verdict.Pass, ""},
		{"thinned with failures", requestsAt(12.1, 0, 40*s, func(i int) bool { return i == 100 }), nil, verdict.Fail, ""},
		{"thinned around a raised rate", append(append(requestsAt(12, 0, 10*s, nil), requestsAt(400, 10*s, 30*s, nil)...), requestsAt(12, 30*s, 40*s, nil)...),
			[]timeline.FaultWindow{overload}, verdict.Inconclusive, "the load sent 12.1/s of the asked 30/s"},
	} {
		in := verdict.Input{Requests: c.reqs, Load: load, LoadRate: 30, Faults: c.faults}
		if c.faults == nil {
			in.Faults = []timeline.FaultWindow{}
		}
		res, err := verdict.Evaluate(in, verdict.Spec{Rule: "failed-requests-budget"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != c.want || !strings.Contains(strings.Join(res.Unshown, "\n"), c.why) {
			t.Errorf("%s: %s (%s), unshown %q; want %s with %q", c.name, res.Status, res.Observed, res.Unshown, c.want, c.why)
		}
	}
}

// Every rule that judges what the load's requests met names a thinned load among what it could not
// show.
func TestLoadRulesNameAThinnedLoad(t *testing.T) {
	in := verdict.Input{Requests: requestsAt(12.1, 0, 40*time.Second, nil), Load: verdict.Span{End: 40 * time.Second}, LoadRate: 30, Faults: []timeline.FaultWindow{}}
	for _, rule := range []string{"failed-requests-budget", "no-traffic-after-withdrawal", "sheds-excess-load"} {
		res, err := verdict.Evaluate(in, verdict.Spec{Rule: rule})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status == verdict.Pass || !strings.Contains(strings.Join(res.Unshown, "\n"), "the load sent 12.1/s of the asked 30/s") {
			t.Errorf("%s: %s, unshown %q: the thinned load is not named", rule, res.Status, res.Unshown)
		}
	}
}

// The load's span ends when the harness has collected it (in-flight requests, attribution, the
// reverts): a full 40 s load whose span closed at 48 s was sent at its rate, not thinned.
func TestLoadCollectedLateIsNotThinned(t *testing.T) {
	in := verdict.Input{Requests: requestsAt(28.5, 0, 40*time.Second, nil), Load: verdict.Span{End: 48 * time.Second}, LoadRate: 30, Faults: []timeline.FaultWindow{}}
	res, err := verdict.Evaluate(in, verdict.Spec{Rule: "failed-requests-budget"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != verdict.Pass {
		t.Errorf("%s (%s), unshown %q; want PASS: the rate is measured up to the last send", res.Status, res.Observed, res.Unshown)
	}
}
