package soak

import (
	"testing"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

func run(scenarios ...reports.ScenarioReport) *reports.Report {
	return &reports.Report{Scenarios: scenarios}
}

func sc(name, variant string, verdicts ...verdict.Result) reports.ScenarioReport {
	return reports.ScenarioReport{Name: name, Variant: variant, Verdicts: verdicts}
}

func v(rule string, st verdict.Status) verdict.Result { return verdict.Result{Rule: rule, Status: st} }

func TestCompareCountsFlipsAndInconclusive(t *testing.T) {
	runs := []*reports.Report{
		run(sc("db-slowness", "good", v("min-ready-endpoints", verdict.Pass), v("recovery-within", verdict.Pass)),
			sc("db-slowness", "deep-liveness", v("no-liveness-restarts", verdict.Fail))),
		run(sc("db-slowness", "good", v("min-ready-endpoints", verdict.Pass), v("recovery-within", verdict.Fail)),
			sc("db-slowness", "deep-liveness", v("no-liveness-restarts", verdict.Fail))),
		run(sc("db-slowness", "good", v("min-ready-endpoints", verdict.Inconclusive), v("recovery-within", verdict.Pass)),
			reports.ScenarioReport{Name: "db-slowness", Variant: "deep-liveness", Error: "deploy: timed out"}),
	}
	res := Compare(runs, All)
	if res.Runs != 3 || res.Verdicts != 9 || res.Inconclusive != 2 {
		t.Fatalf("runs %d verdicts %d inconclusive %d, want 3 9 2", res.Runs, res.Verdicts, res.Inconclusive)
	}
	var got []string
	for _, f := range res.Flips {
		got = append(got, f.String())
	}
	want := []string{
		"db-slowness/deep-liveness (scenario error): ERROR×1 RAN×2",
		"db-slowness/good min-ready-endpoints: INCONCLUSIVE×1 PASS×2",
		"db-slowness/good recovery-within: FAIL×1 PASS×2",
	}
	if len(got) != len(want) {
		t.Fatalf("flips %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("flip %d = %q, want %q", i, got[i], want[i])
		}
	}
	if r := res.InconclusiveRate(); r != 2.0/9 {
		t.Errorf("inconclusive rate %g, want 2/9", r)
	}
}

func TestCompareStableRunsHaveNoFlips(t *testing.T) {
	one := sc("overload", "good", v("min-ready-endpoints", verdict.Pass))
	res := Compare([]*reports.Report{run(one), run(one), run(one)}, All)
	if len(res.Flips) != 0 || res.Inconclusive != 0 || res.Verdicts != 3 {
		t.Fatalf("stable runs: %+v", res)
	}
	if Compare(nil, All).InconclusiveRate() != 0 {
		t.Fatal("no runs: rate must be 0")
	}
}

func TestOnlyAssertedVerdictsCount(t *testing.T) {
	// deep-liveness's designated rule is no-liveness-restarts; its recovery-within is nobody's claim.
	m := &scenario.Matrix{Mutations: []scenario.Mutation{{Variant: "deep-liveness", Scenario: "db-slowness", Rule: "no-liveness-restarts"}}}
	runs := []*reports.Report{
		run(sc("db-slowness", "good", v("recovery-within", verdict.Pass)),
			sc("db-slowness", "deep-liveness", v("no-liveness-restarts", verdict.Fail), v("recovery-within", verdict.Fail))),
		run(sc("db-slowness", "good", v("recovery-within", verdict.Fail)),
			sc("db-slowness", "deep-liveness", v("no-liveness-restarts", verdict.Fail), v("recovery-within", verdict.Inconclusive))),
	}
	res := Compare(runs, Asserted("good", m))
	if len(res.Flips) != 1 || res.Flips[0].Key.Variant != "good" {
		t.Errorf("asserted flips = %v, want the good target's recovery-within only", res.Flips)
	}
	if len(res.Unasserted) != 1 || res.Unasserted[0].Key.Rule != "recovery-within" || res.Unasserted[0].Key.Variant != "deep-liveness" {
		t.Errorf("unasserted flips = %v, want deep-liveness recovery-within", res.Unasserted)
	}
	if res.Verdicts != 4 || res.Inconclusive != 0 {
		t.Errorf("verdicts %d inconclusive %d, want 4 asserted and 0 (the inconclusive one is unasserted)", res.Verdicts, res.Inconclusive)
	}
	if res := Compare(runs, All); len(res.Flips) != 2 || res.Inconclusive != 1 {
		t.Errorf("All: %d flips, %d inconclusive; want 2 and 1", len(res.Flips), res.Inconclusive)
	}
}
