package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/scenarios"
)

func catalogue(t *testing.T) *scenario.Catalogue {
	t.Helper()
	cat, _, err := scenarios.Load(scenarios.Vocabulary())
	if err != nil {
		t.Fatalf("load catalogue: %v", err)
	}
	return cat
}

// Each catalogue scenario's estimate is its overhead, span and held requests; the wall times beside
// them were measured on a warm 2-core kind cluster (the default suite, bundled target) and the
// estimate must stay within 10 s of each.
func TestEstimateCatalogue(t *testing.T) {
	measured := map[string]time.Duration{ // seconds, the default suite of 2026-12 (546 s in all)
		"cold-start": 91200 * time.Millisecond, "db-outage": 64900 * time.Millisecond, "db-slowness": 66100 * time.Millisecond,
		"drain-exceeds-grace": 76800 * time.Millisecond, "event-loop-stall": 78700 * time.Millisecond,
		"eviction-under-load": 55500 * time.Millisecond, "flapping-dependency": 68600 * time.Millisecond,
		"long-request-drain": 60500 * time.Millisecond, "overload": 60800 * time.Millisecond,
		"pod-delete-under-load": 56700 * time.Millisecond, "process-freeze": 92100 * time.Millisecond,
		"rolling-update-under-load": 87100 * time.Millisecond, "short-freeze": 76500 * time.Millisecond,
	}
	cat := catalogue(t)
	for _, sc := range cat.Scenarios {
		got := estimate(sc, nil)
		if want := bundledOverhead + sc.Span() + sc.Load.Takes; got != want {
			t.Errorf("%s: estimate %s, want overhead + span %s + takes %s", sc.Name, got, sc.Span(), sc.Load.Takes)
		}
		if m, ok := measured[sc.Name]; ok {
			if d := (got - m).Abs(); d > 10*time.Second {
				t.Errorf("%s: estimate %s, measured %s: off by %s", sc.Name, got, m, d)
			}
		}
		if custom := estimate(sc, &scenario.TargetSpec{}); custom <= got {
			t.Errorf("%s: a user's app (%s) is estimated no slower than the bundled target (%s)", sc.Name, custom, got)
		}
	}
	// The whole suite on one node, 2 side by side: node scenarios N/A, the rest packed as RunAll
	// runs them. Measured 546 s.
	e := EstimateRun(cat.Scenarios, nil, 1, 2)
	if e.Total < 520*time.Second || e.Total > 580*time.Second {
		t.Errorf("default suite on one node: %s, measured 546 s", e)
	}
	if n := len(e.Run()); n != 13 {
		t.Errorf("%d scenarios run on one node, want 13: %s", n, e)
	}
}

// Packing follows RunAll: side-by-side scenarios onto the first free lane, longest span first;
// scenarios that run alone after them, one at a time.
func TestEstimatePacking(t *testing.T) {
	sc := func(name string, span time.Duration, parallel bool) *scenario.Scenario {
		return &scenario.Scenario{Name: name, Parallel: parallel, Load: scenario.Load{Duration: span}}
	}
	scs := []*scenario.Scenario{sc("a", 60*time.Second, true), sc("b", 40*time.Second, true),
		sc("c", 30*time.Second, true), sc("alone", 50*time.Second, false)}
	o := bundledOverhead
	for _, tc := range []struct {
		parallel int
		want     time.Duration
	}{
		{1, 180*time.Second + 4*o},                     // every one in turn
		{2, 70*time.Second + 2*o + 50*time.Second + o}, // a | b+c, then alone
		{4, 60*time.Second + o + 50*time.Second + o},
	} {
		if got := EstimateRun(scs, nil, 0, tc.parallel).Total; got != tc.want {
			t.Errorf("parallel %d: %s, want %s", tc.parallel, got, tc.want)
		}
	}
}

// A scenario the target does not take is listed NOT APPLICABLE, with why, and costs nothing; one
// that needs more nodes than the cluster has too, when the nodes are known.
func TestEstimateNotApplicable(t *testing.T) {
	cat := catalogue(t)
	noDB := &scenario.TargetSpec{Name: "web", Workload: scenario.WorkloadRef{Kind: "Deployment", Name: "web"},
		Requests: scenario.Requests{Default: "/"}}
	e := EstimateRun(cat.Scenarios, noDB, 1, 2)
	na := map[string]string{}
	for _, p := range e.Scenarios {
		if p.NotApplicable != "" {
			na[p.Scenario.Name] = p.NotApplicable
			if p.Estimate != 0 {
				t.Errorf("%s is not applicable yet estimated %s", p.Scenario.Name, p.Estimate)
			}
		}
	}
	for name, why := range map[string]string{
		"db-outage": "declares no dependency", "db-slowness": "declares no dependency",
		"event-loop-stall": "stall", "long-request-drain": "requests.takes", "node-drain": "needs 2 schedulable nodes",
	} {
		if !strings.Contains(na[name], why) {
			t.Errorf("%s: not applicable %q, want it to say %q", name, na[name], why)
		}
	}
	if len(e.Scenarios) != len(cat.Scenarios) {
		t.Errorf("%d scenarios plannedScenario of %d: the not applicable ones must be kept and reported", len(e.Scenarios), len(cat.Scenarios))
	}
	if s := e.Left(); !strings.HasPrefix(s, "db-outage (faults[0] db-down: ") {
		t.Errorf("left out %q: db-outage is not listed first, with why", s)
	}
	// Nodes unknown: the node scenarios may run, and are counted.
	if unknown := EstimateRun(cat.Scenarios, nil, 0, 2); unknown.Total <= EstimateRun(cat.Scenarios, nil, 1, 2).Total {
		t.Errorf("with the nodes unknown the node scenarios are not counted: %s", unknown)
	}
}

// Over budget, Fit says in one line what the run takes and which scenarios to drop, the fewest.
func TestEstimateFit(t *testing.T) {
	sc := func(name string, span time.Duration) *scenario.Scenario {
		return &scenario.Scenario{Name: name, Parallel: false, Load: scenario.Load{Duration: span}}
	}
	e := EstimateRun([]*scenario.Scenario{sc("short", 18*time.Second), sc("long", 108*time.Second), sc("mid", 48*time.Second)}, nil, 0, 1)
	if e.Total != 210*time.Second {
		t.Fatalf("total %s, want 3m30s", e.Total)
	}
	if err := e.Fit(4 * time.Minute); err != nil {
		t.Errorf("fits 4m: %v", err)
	}
	err := e.Fit(2 * time.Minute)
	if err == nil {
		t.Fatal("3m30s fits a 2m budget")
	}
	want := "the chosen scenarios take about 3m30s with 1 side by side, over the 2m0s budget: drop long (then about 1m30s), or raise --budget"
	if err.Error() != want {
		t.Errorf("Fit:\n got %s\nwant %s", err, want)
	}
	if err := e.Fit(20 * time.Second); err == nil || !strings.Contains(err.Error(), "drop long, mid, short (then about 0s)") {
		t.Errorf("Fit(20s) = %v, want every scenario dropped", err)
	}
}
