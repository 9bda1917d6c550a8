package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
	"github.com/probegate/probegate/reports"
)

// TestMutationAlsoEvidence judges paper timelines with the real rules and holds the matrix's also
// evidence against their FAILs: a FAIL for the variant's own mistake matches, a FAIL for another
// reason ("exit not observed", a crash) does not, so the row cannot pass on it.
func TestMutationAlsoEvidence(t *testing.T) {
	_, m, err := Load(Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	also := func(variant, scen, rule string) scenario.AlsoRule {
		t.Helper()
		for _, mu := range m.Mutations {
			if mu.Variant != variant || mu.Scenario != scen {
				continue
			}
			for _, a := range mu.Also {
				if a.Rule == rule {
					return a
				}
			}
		}
		t.Fatalf("no row %s × %s with also rule %s", variant, scen, rule)
		return scenario.AlsoRule{}
	}
	const s = time.Second
	const ms = time.Millisecond
	// base is pod a serving under load from the start, deleted by the scenario's fault at 5 s.
	deleted := func() *vt.Builder {
		return vt.New().Oracle(goodOracle(t)).Created(-30*s, "a").ContainerReady(-25*s, "a").Ready(-25*s, "a").
			Traffic(0, 30*s, 30).LoadSpan(0, 30*s).Inject(5*s, "pod-delete", "a").Deleting(5*s, "a", 25*s)
	}
	restarted := func(fault string, cause timeline.RestartCause) *vt.Builder {
		return vt.New().Oracle(goodOracle(t)).Created(-30*s, "a").ContainerReady(-25*s, "a").Ready(-25*s, "a").
			Traffic(0, 30*s, 30).LoadSpan(0, 30*s).Inject(5*s, fault, "").Restart(20*s, "a", cause)
	}
	cases := []struct {
		name  string
		also  scenario.AlsoRule
		run   *vt.Builder
		match bool
	}{
		{"no-drain: exits 150 ms after its withdrawal", also("no-drain", "pod-delete-under-load", "terminating-before-exit"),
			deleted().Terminating(5*s+50*ms, "a").Exited(5*s+200*ms, "a", 0), true},
		{"no-drain: exits while still ready", also("no-drain", "pod-delete-under-load", "terminating-before-exit"),
			deleted().Exited(5*s+100*ms, "a", 0), true},
		{"exit never observed", also("no-drain", "pod-delete-under-load", "terminating-before-exit"),
			deleted().Terminating(5*s+50*ms, "a"), false},
		{"deep-liveness: a liveness restart no fault explains", also("deep-liveness", "db-slowness", "no-unexpected-restarts"),
			restarted("db-latency", timeline.CauseLiveness), true},
		{"a crash no fault explains", also("deep-liveness", "db-slowness", "no-unexpected-restarts"),
			restarted("db-latency", timeline.CauseAppExit), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := verdict.Evaluate(c.run.Input(), verdict.Spec{Rule: c.also.Rule})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != verdict.Fail {
				t.Fatalf("%s is %s (%s): the paper timeline must FAIL it", c.also.Rule, res.Status, res.Observed)
			}
			t.Logf("%s FAILs: %s", c.also.Rule, res.Observed)
			rep := &reports.ScenarioReport{Verdicts: []verdict.Result{res}}
			err = ruleEvidence(rep, c.also.Rule, c.also.Evidence, false, nil)
			if c.match && err != nil {
				t.Errorf("the variant's own FAIL does not match: %v", err)
			}
			if !c.match && err == nil {
				t.Errorf("a FAIL for another reason matches %q: %s", c.also.Evidence, res.Observed)
			}
		})
	}

	// designatedEvidence checks every also rule: one without its evidence fails the row, naming it.
	mu := scenario.Mutation{Rule: "failed-requests-budget", Evidence: "during-termination [1-9]",
		Also: []scenario.AlsoRule{{Rule: "terminating-before-exit", Evidence: also("no-drain", "pod-delete-under-load", "terminating-before-exit").Evidence}}}
	rep := &reports.ScenarioReport{Verdicts: []verdict.Result{
		{Rule: "failed-requests-budget", Status: verdict.Fail, Observed: "4 failed: during-termination 4"},
		{Rule: "terminating-before-exit", Status: verdict.Fail, Observed: "a: exit not observed"},
	}}
	if err := designatedEvidence(mu, rep); err == nil || !strings.Contains(err.Error(), "rule terminating-before-exit") {
		t.Errorf("designatedEvidence = %v, want the also rule's evidence missing", err)
	}
	rep.Verdicts[1].Observed = "a exited 150ms after its withdrawal or kill (< 2s)"
	if err := designatedEvidence(mu, rep); err != nil {
		t.Errorf("designatedEvidence = %v, want nil", err)
	}
}
