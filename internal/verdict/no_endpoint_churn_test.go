package verdict_test

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// flapping is flapping-dependency on paper: three pods ready from 1 s, load from 1 s to 55 s, and
// the database down 3 s four times, 8 s apart (10–13, 18–21, 26–29, 34–37 s). inject records each
// drop (Inject, or InjectUnproven for a fault whose effect was never shown).
func flapping(inject func(b *vt.Builder, t time.Duration) *vt.Builder) *vt.Builder {
	b := vt.New()
	for _, p := range []string{"a", "b", "c"} {
		b.Created(0, p).ContainerReady(ms(800), p)
	}
	b.Ready(s, "a", "b", "c").Traffic(s, 55*s, 30)
	for _, at := range []time.Duration{10 * s, 18 * s, 26 * s, 34 * s} {
		inject(b, at).Revert(at+3*s, "db-down", "")
	}
	return b
}

func proven(b *vt.Builder, t time.Duration) *vt.Builder { return b.Inject(t, "db-down", "") }

func TestNoEndpointChurn(t *testing.T) {
	// The good target: a, the keeper, stays ready; b and c leave with the first drop, come back in the
	// first gap, leave with the second drop and are held out until the database has been up 8 s.
	good := func() *vt.Builder {
		return flapping(proven).NotReady(12*s, "b", "c").Ready(14*s, "b", "c").NotReady(20*s, "b", "c").Ready(46*s, "b", "c")
	}
	// No hysteresis (issue #26): b and c out and back in with each of the four drops, 16 transitions.
	churn := func() *vt.Builder {
		b := flapping(proven)
		for _, at := range []time.Duration{10 * s, 18 * s, 26 * s, 34 * s} {
			b.NotReady(at+2*s, "b", "c").Ready(at+4*s, "b", "c")
		}
		return b
	}
	cases := []struct {
		name     string
		params   map[string]string
		run      *vt.Builder
		want     verdict.Status
		at       time.Duration
		observed string
		evidence string
	}{
		{name: "good target: one return, then held out", run: good(), want: verdict.Pass, observed: "b: 1 cycles, 3 rotation changes"},
		{name: "no hysteresis: out and in with every drop", run: churn(), want: verdict.Fail, at: 28 * s,
			observed: "b: 3 cycles, 8 rotation changes", evidence: "b: 3 out→in→out cycles during the flapping, 8 rotation changes (allowed 1 cycles): ENDPOINT CHURN"},
		{name: "no hysteresis within a raised tolerance", params: map[string]string{"max-cycles": "3"}, run: churn(), want: verdict.Pass},
		{name: "nobody left rotation", run: flapping(proven), want: verdict.Pass, observed: "no pod left or re-entered"},
		{name: "a restart is no cycle", run: flapping(proven).NotReady(12*s, "b").Ready(14*s, "b").
			Restart(20*s, "b", timeline.CauseOOM).Removed(20*s, "b").Ready(22*s, "b").NotReady(28*s, "b").Ready(46*s, "b"),
			want: verdict.Pass},
		{name: "faults never shown to act", run: flapping(func(b *vt.Builder, t time.Duration) *vt.Builder {
			return b.InjectUnproven(t, "db-down", "")
		}).NotReady(12*s, "b").Ready(14*s, "b").NotReady(20*s, "b").Ready(22*s, "b").NotReady(28*s, "b").Ready(30*s, "b"),
			want: verdict.Inconclusive},
		{name: "one fault cannot flap", run: base().Inject(10*s, "db-down", "").NotReady(12*s, "b").Revert(13*s, "db-down", "").Ready(14*s, "b"),
			want: verdict.Inconclusive, observed: "at least two"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := verdict.Evaluate(tc.run.Input(), verdict.Spec{Rule: "no-endpoint-churn", Params: tc.params})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: expected %s; observed %s; unshown %v", res.Status, res.Expected, res.Observed, res.Unshown)
			for _, ev := range res.Evidence {
				t.Logf("  %+v", ev)
			}
			if res.Status != tc.want {
				t.Fatalf("status %s, want %s", res.Status, tc.want)
			}
			if tc.observed != "" && !strings.Contains(res.Observed, tc.observed) {
				t.Errorf("observed %q lacks %q", res.Observed, tc.observed)
			}
			if tc.evidence != "" && !hasEvidence(res, tc.evidence) {
				t.Errorf("no evidence note contains %q", tc.evidence)
			}
			switch {
			case tc.want == verdict.Fail && (res.At == nil || *res.At != tc.at):
				t.Errorf("At = %v, want %s", res.At, tc.at)
			case tc.want != verdict.Fail && res.At != nil:
				t.Errorf("%s with At %s", res.Status, *res.At)
			}
		})
	}
}
