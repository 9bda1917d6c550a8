package lint

import (
	"slices"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/scenarios"
)

func TestConfirm(t *testing.T) {
	r := &Rule{ID: "PG009", Scenario: "pod-delete-under-load", Predicts: []string{"failed-requests-budget", "terminating-before-exit"}}
	run := func(statuses ...string) ScenarioRun {
		s := ScenarioRun{Scenario: "pod-delete-under-load", Report: "out"}
		for i, st := range statuses {
			s.Verdicts = append(s.Verdicts, ScenarioVerdict{Rule: r.Predicts[i], Status: verdict.Status(st), Observed: "seen " + st})
		}
		// Not predicted, and judges no fault's effect: it does not keep a refutation (see
		// TestConfirmNeedsTheFaultToHaveReachedTheApp).
		s.Verdicts = append(s.Verdicts, ScenarioVerdict{Rule: "min-ready-endpoints", Status: verdict.Fail})
		return s
	}
	for _, c := range []struct {
		name string
		run  ScenarioRun
		want string
		why  string
	}{
		{"one predicted verdict failed", run("PASS", "FAIL"), Confirmed, "terminating-before-exit FAILed (seen FAIL)"},
		{"all predicted verdicts passed", run("PASS", "PASS"), Refuted, "failed-requests-budget and terminating-before-exit PASSed"},
		{"one inconclusive, none failed", run("PASS", "INCONCLUSIVE"), Unconfirmed, "terminating-before-exit was INCONCLUSIVE"},
		{"a predicted verdict missing", run("PASS"), Unconfirmed, "terminating-before-exit was not judged"},
		{"the scenario did not run", ScenarioRun{Scenario: "pod-delete-under-load", Error: "deploy: image missing"}, Unconfirmed, "did not complete: deploy: image missing"},
	} {
		got := Confirm(r, &Finding{}, c.run)
		if got.Status != c.want || !strings.Contains(got.Why, c.why) || got.Scenario != "pod-delete-under-load" {
			t.Errorf("%s: got %s (%s), want %s with %q", c.name, got.Status, got.Why, c.want, c.why)
		}
	}
	// A rule no verdict judges is never confirmed nor refuted, whatever failed.
	if got := Confirm(&Rule{ID: "PG007", Scenario: "db-outage"}, &Finding{}, run("FAIL", "FAIL")); got.Status != Unconfirmed {
		t.Errorf("rule without predicted verdicts: %s (%s)", got.Status, got.Why)
	}
	skipped := ScenarioRun{Scenario: "event-loop-stall", Verdicts: []ScenarioVerdict{{Rule: "liveness-restart-in-window", Status: verdict.Inconclusive,
		Observed: "not judged: fault skipped: the target has no admin endpoint to stall"}}}
	if got := Confirm(&Rule{ID: "PG002", Scenario: "event-loop-stall"}, &Finding{}, skipped); got.Status != Unconfirmed || !strings.Contains(got.Why, "no admin endpoint") {
		t.Errorf("a run whose fault was skipped should say so: %s (%s)", got.Status, got.Why)
	}
}

// Each rule's predicted verdicts are verdicts its scenario judges, so --confirm can read them.
func TestPredictsAreScenarioVerdicts(t *testing.T) {
	cat, _, err := scenarios.Load(scenarios.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	predicting := 0
	for _, r := range Rules() {
		if len(r.Predicts) == 0 {
			continue
		}
		predicting++
		sc, ok := cat.Get(r.Scenario)
		if !ok {
			t.Errorf("%s: scenario %q is not in the catalogue", r.ID, r.Scenario)
			continue
		}
		for _, p := range r.Predicts {
			if !slices.Contains(sc.Rules(), p) {
				t.Errorf("%s predicts %s to fail, but %s does not judge it (it judges %v)", r.ID, p, r.Scenario, sc.Rules())
			}
		}
	}
	if predicting < 5 {
		t.Errorf("only %d rules predict verdicts", predicting)
	}
}

// A confirmation is printed under its finding and counted in the summary, in every format.
func TestConfirmationInOutput(t *testing.T) {
	c := Confirmation{Status: Refuted, Scenario: "pod-delete-under-load", Why: "failed-requests-budget PASSed", Report: "out/target"}
	rep := &Report{Workloads: 1, FailOn: Warning, Findings: []Finding{{RuleID: "PG009", RuleName: "no-withdrawal-delay", Severity: Warning,
		Object: "deployment/podinfo", Message: "no preStop", Confirmation: &c}}}
	want := "refuted by pod-delete-under-load: failed-requests-budget PASSed (report out/target)"
	for name, write := range map[string]func(*strings.Builder) error{
		"text":  func(b *strings.Builder) error { return WriteText(b, rep) },
		"sarif": func(b *strings.Builder) error { return WriteSARIF(b, rep) },
		"json":  func(b *strings.Builder) error { return WriteJSON(b, rep) },
	} {
		var b strings.Builder
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if name == "json" {
			if !strings.Contains(got, `"status": "refuted"`) {
				t.Errorf("json lacks the confirmation:\n%s", got)
			}
			continue
		}
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %q:\n%s", name, want, got)
		}
	}
	var b strings.Builder
	_ = WriteText(&b, rep)
	if !strings.Contains(b.String(), "0 confirmed, 1 refuted, 0 inconclusive") {
		t.Errorf("text summary lacks the counts:\n%s", b.String())
	}
}

// TestConfirmNeedsTheFaultToHaveReachedTheApp: a PASS of the predicted verdicts refutes a finding
// only when the rest of the run shows the scenario exercised the workload: every verdict that judges
// a fault's effect PASSed and nothing was INCONCLUSIVE. A freeze that stopped an entrypoint wrapper
// (readiness never withdrawn) leaves no-liveness-restarts PASSing without showing anything (audit N16).
func TestConfirmNeedsTheFaultToHaveReachedTheApp(t *testing.T) {
	pg002 := &Rule{ID: "PG002", Scenario: "short-freeze", Predicts: []string{"no-liveness-restarts"}}
	run := func(others ...ScenarioVerdict) ScenarioRun {
		return ScenarioRun{Scenario: "short-freeze", Verdicts: append([]ScenarioVerdict{
			{Rule: "no-liveness-restarts", Status: verdict.Pass, Observed: "0 liveness restarts"}}, others...)}
	}
	for _, c := range []struct {
		name string
		run  ScenarioRun
		want string
		why  string
	}{
		{"the freeze never reached the app", run(
			ScenarioVerdict{Rule: "readiness-withdrawn-in-window", Status: verdict.Fail, Observed: "pod a never withdrawn"},
			ScenarioVerdict{Rule: "recovery-within", Status: verdict.Pass}),
			Unconfirmed, "readiness-withdrawn-in-window FAILed (pod a never withdrawn)"},
		{"a fault effect inconclusive", run(
			ScenarioVerdict{Rule: "readiness-withdrawn-in-window", Status: verdict.Inconclusive, Observed: "not judged: no fault acted (freeze unproven)"}),
			Unconfirmed, "readiness-withdrawn-in-window was INCONCLUSIVE (not judged: no fault acted (freeze unproven))"},
		{"another verdict inconclusive", run(
			ScenarioVerdict{Rule: "readiness-withdrawn-in-window", Status: verdict.Pass},
			ScenarioVerdict{Rule: "min-ready-endpoints", Status: verdict.Inconclusive, Observed: "watch gap"}),
			Unconfirmed, "min-ready-endpoints was INCONCLUSIVE (watch gap)"},
		{"every fault effect passed", run(
			ScenarioVerdict{Rule: "readiness-withdrawn-in-window", Status: verdict.Pass},
			ScenarioVerdict{Rule: "recovery-within", Status: verdict.Pass}),
			Refuted, "no-liveness-restarts PASSed"},
		// A FAIL of a rule that does not judge the fault's effect shows the fault did something.
		{"a survivor rule failed", run(
			ScenarioVerdict{Rule: "readiness-withdrawn-in-window", Status: verdict.Pass},
			ScenarioVerdict{Rule: "min-ready-endpoints", Status: verdict.Fail, Observed: "1 ready"}),
			Refuted, "no-liveness-restarts PASSed"},
	} {
		got := Confirm(pg002, &Finding{}, c.run)
		if got.Status != c.want || !strings.Contains(got.Why, c.why) {
			t.Errorf("%s: got %s (%s), want %s with %q", c.name, got.Status, got.Why, c.want, c.why)
		}
	}
}
