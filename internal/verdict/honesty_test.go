package verdict_test

import (
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// Each case is a run on which a rule used to PASS without having seen what it judges: the verdict
// must be INCONCLUSIVE and name what it could not show.
func TestNoVacuousPass(t *testing.T) {
	anonymous := func(in verdict.Input) verdict.Input {
		for i := range in.Requests {
			in.Requests[i].Pod = ""
		}
		return in
	}
	declare := func(d ...timeline.DeclaredFault) func(verdict.Input) verdict.Input {
		return func(in verdict.Input) verdict.Input { in.Declared = d; return in }
	}
	dbDown := timeline.DeclaredFault{Name: "db-down", Type: "db-down", Due: 23 * s, Duration: 3 * s}
	cases := []struct {
		name    string
		rule    string
		params  map[string]string
		run     *vt.Builder
		edit    func(verdict.Input) verdict.Input
		unshown string // substring of some Unshown line
	}{
		// 0. a declared fault the schedule never reached, or squeezed to nothing
		{name: "declared fault never on the timeline", rule: "no-liveness-restarts",
			run: base(), edit: declare(dbDown), unshown: "db-down (db-down) left no trace on the timeline: due at 23s"},
		{name: "declared fault never on the timeline: not judged", rule: "readiness-withdrawn-in-window",
			run: base(), edit: declare(dbDown), unshown: "left no trace"},
		{name: "declared fault squeezed", rule: "recovery-within", params: map[string]string{"within": "10s"},
			run: base().Inject(37*s, "db-down", "").Revert(ms(37200), "db-down", ""), edit: declare(dbDown),
			unshown: "db-down (db-down) ran 0.2s of its declared 3s: injected 14s late"},
		// 1. a skipped fault: rules that do not name it passed vacuously
		{name: "skipped fault, restarts rule", rule: "no-liveness-restarts",
			run: base().Skip(10*s, "db-latency", "no toxiproxy in front of the target's database"), unshown: "db-latency was skipped: no toxiproxy"},
		{name: "skipped fault, endpoints rule", rule: "min-ready-endpoints", params: map[string]string{"min": "1"},
			run: base().Skip(10*s, "db-latency", "no toxiproxy"), unshown: "skipped"},
		{name: "skipped fault, budget rule", rule: "failed-requests-budget",
			run: base().Skip(10*s, "db-latency", "no toxiproxy"), unshown: "skipped"},
		// 2. a fault that had no effect
		{name: "db-down not observed, recovery", rule: "recovery-within", params: map[string]string{"within": "10s"},
			run:     base().InjectUnproven(10*s, "db-down", "").Observe(11*s, "db-down", "", timeline.EffectNotObserved).Revert(20*s, "db-down", ""),
			unshown: "effect was not observed"},
		{name: "no proof recorded, withdrawal", rule: "readiness-withdrawn-in-window",
			run: base().InjectUnproven(10*s, "stall", "a").NotReady(13*s, "a"), unshown: "no proof of its effect"},
		{name: "nothing happened: not judged", rule: "readiness-withdrawn-in-window",
			run: base().InjectUnproven(10*s, "stall", "a").Observe(11*s, "stall", "a", timeline.EffectNotObserved), unshown: "not observed"},
		// 3. no evidence: unattributable requests, unknown restart causes
		{name: "no attributable requests", rule: "no-traffic-after-withdrawal",
			run: base().Inject(10*s, "stall", "a").NotReady(13*s, "a"), edit: anonymous, unshown: "attributed"},
		{name: "unknown restart cause", rule: "no-liveness-restarts",
			run: base().Restart(20*s, "b", timeline.CauseUnknown), unshown: "unknown cause"},
		{name: "unknown restart cause, startup", rule: "startup-not-killed",
			run: base().Restart(20*s, "b", timeline.CauseUnknown), unshown: "unknown cause"},
		// 4. a watch gap inside the judged span
		{name: "watch gap, endpoints", rule: "min-ready-endpoints", params: map[string]string{"min": "3"},
			run: base().WatchGap(15*s, "endpointslices watch ended; relisting"), unshown: "watch gap at 15s"},
		{name: "watch gap, restarts", rule: "no-liveness-restarts",
			run: base().WatchGap(15*s, "pods watch ended; relisting"), unshown: "watch gap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.run.Input()
			if c.edit != nil {
				in = c.edit(in)
			}
			res, err := verdict.Evaluate(in, verdict.Spec{Rule: c.rule, Params: c.params})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != verdict.Inconclusive {
				t.Fatalf("status %s, want INCONCLUSIVE (observed %q, unshown %q)", res.Status, res.Observed, res.Unshown)
			}
			if !strings.Contains(strings.Join(res.Unshown, "\n"), c.unshown) {
				t.Errorf("unshown %q does not mention %q", res.Unshown, c.unshown)
			}
		})
	}
}

// The gate never hides a real failure, and never downgrades a run that saw everything.
func TestGateKeepsEarnedOutcomes(t *testing.T) {
	cases := []struct {
		name     string
		rule     string
		run      *vt.Builder
		declared []timeline.DeclaredFault
		want     verdict.Status
	}{
		{name: "declared fault on time and full length passes", rule: "no-liveness-restarts",
			run:      base().Inject(ms(10100), "db-latency", "").Revert(20*s, "db-latency", ""),
			declared: []timeline.DeclaredFault{{Name: "db-latency", Type: "db-latency", Due: 10 * s, Duration: 10 * s}}, want: verdict.Pass},
		{name: "liveness restart beside a missing fault still fails", rule: "no-liveness-restarts",
			run:      base().Restart(20*s, "b", timeline.CauseLiveness),
			declared: []timeline.DeclaredFault{{Name: "faults[0]", Type: "db-down", Due: 10 * s, Duration: 3 * s}}, want: verdict.Fail},
		{name: "liveness restart beside a skipped fault still fails", rule: "no-liveness-restarts",
			run: base().Skip(10*s, "db-latency", "no toxiproxy").Restart(20*s, "b", timeline.CauseLiveness), want: verdict.Fail},
		{name: "proven fault, clean run passes", rule: "no-liveness-restarts",
			run: base().Inject(10*s, "db-latency", "").Revert(20*s, "db-latency", ""), want: verdict.Pass},
		{name: "a confirmed observation wins over an earlier miss", rule: "no-liveness-restarts",
			run: base().InjectUnproven(10*s, "freeze", "a").Observe(11*s, "freeze", "a", timeline.EffectNotObserved).
				Observe(12*s, "freeze", "a", timeline.EffectConfirmed), want: verdict.Pass},
		{name: "gap before the load does not count", rule: "min-ready-endpoints",
			run: vt.New().WatchGap(0, "pods").Created(3*s, "a").ContainerReady(3*s, "a").Ready(4*s, "a").Traffic(40*s, 60*s, 10), want: verdict.Pass},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.run.Input()
			in.Declared = c.declared
			res, err := verdict.Evaluate(in, verdict.Spec{Rule: c.rule})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.want {
				t.Fatalf("status %s, want %s (observed %q, unshown %q)", res.Status, c.want, res.Observed, res.Unshown)
			}
		})
	}
}
