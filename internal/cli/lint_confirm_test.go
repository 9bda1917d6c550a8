package cli

import (
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/lint"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

func TestPlanConfirm(t *testing.T) {
	findings := func() *lint.Report {
		return &lint.Report{Findings: []lint.Finding{
			{RuleID: "PG005", Object: "deployment/target", Variant: "deep-liveness"}, // db-slowness
			{RuleID: "PG001", Object: "deployment/target", Variant: "deep-liveness"}, // db-slowness again
			{RuleID: "PG009", Object: "deployment/target", Variant: "no-drain"},      // pod-delete-under-load
			{RuleID: "PG009", Object: "deployment/api"},                              // nothing to deploy it with
			{RuleID: "PG016", Object: "deployment/target", Variant: "deep-liveness"}, // no scenario
		}}
	}
	rep := findings()
	runs := planConfirm(rep, "", nil)
	if len(runs) != 2 || runs["variant-deep-liveness"] == nil || runs["variant-no-drain"] == nil {
		t.Fatalf("runs = %v, want one per variant", runs)
	}
	if d := runs["variant-deep-liveness"]; strings.Join(d.scenarios, ",") != "db-slowness" || len(d.findings) != 2 || d.req.Variant != "deep-liveness" {
		t.Errorf("deep-liveness run = %+v: want db-slowness once for both findings, with the variant", d)
	}
	if c := rep.Findings[3].Confirmation; c == nil || c.Status != lint.Unconfirmed || !strings.Contains(c.Why, "give --target") {
		t.Errorf("a workload nothing can deploy: %+v", c)
	}
	if rep.Findings[4].Confirmation != nil {
		t.Errorf("a rule without a scenario got a confirmation: %+v", rep.Findings[4].Confirmation)
	}

	// With a target file, only its workload runs, as the file deploys it.
	rep = findings()
	target := &scenario.TargetSpec{Workload: scenario.WorkloadRef{Kind: "Deployment", Name: "api"}}
	runs = planConfirm(rep, "t.yaml", target)
	if len(runs) != 1 || runs["target"] == nil || runs["target"].req.TargetFile != "t.yaml" || len(runs["target"].findings) != 1 {
		t.Fatalf("runs with a target = %+v", runs)
	}
	if c := rep.Findings[0].Confirmation; c == nil || c.Status != lint.Unconfirmed || !strings.Contains(c.Why, "runs deployment/api, not deployment/target") {
		t.Errorf("another workload than the target's: %+v", c)
	}
}

// A verdict's caveat (a starved host) reaches the confirmation's observed text, as its unshown lines do.
func TestScenarioRunKeepsCaveats(t *testing.T) {
	run := scenarioRun(reports.ScenarioReport{Name: "short-freeze", Verdicts: []verdict.Result{
		{Rule: "no-liveness-restarts", Status: verdict.Fail, Observed: "1 liveness restarts", Caveats: []string{"the host was starved for CPU at 5s–15s"}},
	}}, "out")
	if len(run.Verdicts) != 1 || !strings.Contains(run.Verdicts[0].Observed, "caveat: the host was starved") {
		t.Errorf("verdicts %+v: want the caveat in observed", run.Verdicts)
	}
}

// TestLintOutcome: findings at or above --fail-on exit 1 whatever their confirmation; below it, a
// confirmation that could not decide exits 3 (never 0); confirmed and refuted ones decide nothing
// about the exit.
func TestLintOutcome(t *testing.T) {
	conf := func(status string) *lint.Confirmation {
		return &lint.Confirmation{Status: status, Scenario: "db-slowness"}
	}
	warning := func(c *lint.Confirmation) lint.Finding {
		return lint.Finding{RuleID: "PG005", Severity: lint.Warning, Object: "deployment/target", Confirmation: c}
	}
	cases := []struct {
		name     string
		failOn   lint.Severity
		findings []lint.Finding
		code     int
	}{
		{"no findings", lint.Warning, nil, ExitOK},
		{"not confirmed, below fail-on", lint.Error, []lint.Finding{warning(nil)}, ExitOK},
		{"refuted below fail-on", lint.Error, []lint.Finding{warning(conf(lint.Refuted))}, ExitOK},
		{"confirmed below fail-on", lint.Error, []lint.Finding{warning(conf(lint.Confirmed))}, ExitOK},
		{"inconclusive below fail-on", lint.Error, []lint.Finding{warning(conf(lint.Confirmed)), warning(conf(lint.Unconfirmed))}, ExitInconclusive},
		{"inconclusive with fail-on none", lint.SeverityNone, []lint.Finding{warning(conf(lint.Unconfirmed))}, ExitInconclusive},
		{"inconclusive at fail-on", lint.Warning, []lint.Finding{warning(conf(lint.Unconfirmed))}, ExitFail},
		{"refuted at fail-on still fails", lint.Warning, []lint.Finding{warning(conf(lint.Refuted))}, ExitFail},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := lintOutcome(&lint.Report{FailOn: c.failOn, Findings: c.findings})
			if code := exitCode(err); code != c.code {
				t.Errorf("exit %d (%v), want %d", code, err, c.code)
			}
		})
	}
}
