package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/term"

	"github.com/probegate/probegate/internal/interrupt"
	"github.com/probegate/probegate/internal/lint"
	"github.com/probegate/probegate/internal/runner"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/scenarios"
)

// confirmRun is one set of scenarios run against one deployable form of the linted workloads: the
// user's target file, or a bundled fixture variant.
type confirmRun struct {
	name      string // the report subdirectory: "target" or "variant-<name>"
	req       runner.Request
	scenarios []string
	findings  []int // indexes into the report's findings
}

// confirmFindings runs each finding's confirming scenario once against the workload it is about
// and records on every finding whether the run confirmed it, refuted it or could show neither
// (lint.Confirm). Workloads run as the target file names them (--target) or as the bundled fixture
// variant they are; a finding about any other workload is inconclusive, saying why. The reports go
// under out. An error means no run could be set up (bad target file, no cluster, interrupted).
func confirmFindings(ctx context.Context, rep *lint.Report, targetFile, kubeconfig, out string) error {
	var target *scenario.TargetSpec
	if targetFile != "" {
		t, err := scenario.LoadTargetSpec(targetFile)
		if err != nil {
			return fmt.Errorf("lint --confirm: %w", err)
		}
		target = t
	}
	runs := planConfirm(rep, targetFile, target)
	if len(runs) == 0 {
		return nil
	}
	vocab := scenarios.Vocabulary()
	cat, _, err := scenarios.Load(vocab)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(runs))
	for k := range runs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tty := term.IsTerminal(int(os.Stderr.Fd()))
	for _, k := range keys {
		run := runs[k]
		run.req.Scenarios, run.req.Kubeconfig, run.req.Logger = run.scenarios, kubeconfig, slog.Default()
		dir := filepath.Join(out, run.name)
		slog.Info("lint --confirm: running", "scenarios", strings.Join(run.scenarios, ","), "as", run.name, "report", dir)
		r, scs, progress, err := setupRunner(ctx, run.req, cat, vocab, tty)
		if err != nil {
			return err
		}
		res, err := r.Execute(ctx, scs, dir, os.Args)
		progress.Close()
		if err != nil {
			return withCode(ExitError, err)
		}
		byName := map[string]lint.ScenarioRun{}
		for _, s := range res.Scenarios {
			byName[s.Name] = scenarioRun(s, dir)
		}
		for _, i := range run.findings {
			f := &rep.Findings[i]
			rule, _ := lint.RuleByID(f.RuleID)
			sr, ok := byName[rule.Scenario]
			if !ok {
				sr = lint.ScenarioRun{Scenario: rule.Scenario, Error: "not run", Report: dir}
			}
			c := lint.Confirm(rule, f, sr)
			f.Confirmation = &c
		}
		if sig := interrupt.From(ctx); sig != nil {
			return withCode(sig.ExitCode(), fmt.Errorf("%s: lint --confirm stopped early; what was recorded is in %s", sig, dir))
		}
	}
	return nil
}

// scenarioRun is a scenario report as confirmation reads it.
func scenarioRun(s reports.ScenarioReport, dir string) lint.ScenarioRun {
	run := lint.ScenarioRun{Scenario: s.Name, Error: s.Error, Report: dir}
	for _, v := range s.Verdicts {
		observed := v.Observed
		if len(v.Unshown) > 0 {
			observed += "; " + strings.Join(v.Unshown, "; ")
		}
		if len(v.Caveats) > 0 {
			observed += "; caveat: " + strings.Join(v.Caveats, "; ")
		}
		run.Verdicts = append(run.Verdicts, lint.ScenarioVerdict{Rule: v.Rule, Status: v.Status, Observed: observed})
	}
	return run
}

// planConfirm groups the findings that can be confirmed by how their workload can be deployed,
// one run per group with each scenario once, and marks the others inconclusive, saying why.
func planConfirm(rep *lint.Report, targetFile string, target *scenario.TargetSpec) map[string]*confirmRun {
	runs := map[string]*confirmRun{}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		r, ok := lint.RuleByID(f.RuleID)
		if !ok || r.Scenario == "" {
			continue // no scenario can show it; the rule's ConfirmNote says how to check it
		}
		unconfirmed := func(why string) {
			f.Confirmation = &lint.Confirmation{Status: lint.Unconfirmed, Scenario: r.Scenario, Why: why}
		}
		var key string
		var req runner.Request
		switch {
		case target != nil && f.Object != target.Workload.String():
			unconfirmed(fmt.Sprintf("the target file %s runs %s, not %s", targetFile, target.Workload, f.Object))
			continue
		case target != nil:
			key, req = "target", runner.Request{TargetFile: targetFile}
		case f.Variant != "":
			key, req = "variant-"+f.Variant, runner.Request{Variant: f.Variant}
		default:
			unconfirmed("no way to deploy this workload: give --target with a target file naming these manifests (docs/target-file.md)")
			continue
		}
		run := runs[key]
		if run == nil {
			run = &confirmRun{name: key, req: req}
			runs[key] = run
		}
		if !slices.Contains(run.scenarios, r.Scenario) {
			run.scenarios = append(run.scenarios, r.Scenario)
		}
		run.findings = append(run.findings, i)
	}
	return runs
}
