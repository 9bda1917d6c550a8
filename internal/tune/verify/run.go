package verify

import (
	"context"
	"fmt"
	"strings"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// Exit codes of a verification, as probegate run's.
const (
	ExitPass         = 0 // every rule of every re-run passes
	ExitFail         = 1 // some rule still fails after the patch
	ExitError        = 2 // bad input, or a re-run did not reach its verdicts
	ExitInconclusive = 3 // nothing fails, but something could not be shown, or nothing was verifiable
)

// Rerunner runs scenarios against w's workload with w.Patch applied, each in a fresh namespace,
// and returns their reports in the order given.
type Rerunner interface {
	Rerun(ctx context.Context, w *Workload, scs []*scenario.Scenario) ([]reports.ScenarioReport, error)
}

// Run re-runs every workload's reruns with its patch and concludes each applied change. An error
// means the reruns could not be started (nothing to conclude).
func Run(ctx context.Context, p *Plan, rr Rerunner) error {
	for _, w := range p.Workloads {
		if len(w.Reruns) == 0 {
			continue
		}
		scs := make([]*scenario.Scenario, len(w.Reruns))
		for i, r := range w.Reruns {
			scs[i] = r.Scenario
		}
		reps, err := rr.Rerun(ctx, w, scs)
		if err != nil {
			return fmt.Errorf("verify %s/%s: %w", w.Kind, w.Name, err)
		}
		if len(reps) != len(scs) {
			return fmt.Errorf("verify %s/%s: %d reports for %d scenarios", w.Kind, w.Name, len(reps), len(scs))
		}
		for i, r := range w.Reruns {
			r.Ran, r.After, r.AfterError = true, reps[i].Verdicts, reps[i].Error
		}
		for _, c := range w.Changes {
			if c.Applied {
				c.Outcome, c.Why = conclude(w, c)
			}
		}
	}
	return nil
}

// conclude judges one applied change by the verdicts of the runs that motivated it, before and
// after.
func conclude(w *Workload, c *Change) (Outcome, string) {
	var failing, flipped, unshown, passed []string
	for _, i := range c.Reruns {
		r := w.Reruns[i]
		if r.AfterError != "" {
			return Inconclusive, fmt.Sprintf("the re-run of %s did not reach its verdicts: %s", r.Label, r.AfterError)
		}
		if len(r.After) == 0 {
			unshown = append(unshown, r.Label+" (no verdict)")
		}
		var f, fl, u, p []string
		for _, v := range r.After {
			b, had := byRule(r.Before)[v.Rule]
			switch {
			case v.Status == verdict.Fail:
				f = append(f, v.Rule)
			case v.Status == verdict.Inconclusive, v.Status == verdict.NotApplicable:
				u = append(u, v.Rule) // not applicable after the patch: nothing ran, nothing verified
			case r.BeforeError != "" || (had && b.Status != verdict.Pass):
				fl = append(fl, fmt.Sprintf("%s %s → PASS", v.Rule, beforeStatus(r, v.Rule)))
			default:
				p = append(p, v.Rule)
			}
		}
		failing, flipped = appendRun(failing, r.Label, f), appendRun(flipped, r.Label, fl)
		unshown, passed = appendRun(unshown, r.Label, u), appendRun(passed, r.Label, p)
	}
	switch {
	case len(failing) > 0:
		return NotFixed, "still FAIL after the patch: " + strings.Join(failing, "; ")
	case len(unshown) > 0:
		return Inconclusive, "nothing fails after the patch, but INCONCLUSIVE: " + strings.Join(unshown, "; ")
	case len(flipped) > 0:
		return Fixed, strings.Join(flipped, "; ")
	}
	return Holds, "every rule passed before and passes after (" + strings.Join(passed, "; ") + "): no verdict showed the problem this change guards against"
}

// appendRun adds "label: a, b" to out when rules is not empty.
func appendRun(out []string, label string, rules []string) []string {
	if len(rules) == 0 {
		return out
	}
	return append(out, label+": "+strings.Join(rules, ", "))
}

func byRule(vs []verdict.Result) map[string]verdict.Result {
	m := make(map[string]verdict.Result, len(vs))
	for _, v := range vs {
		m[v.Rule] = v
	}
	return m
}

// beforeStatus is a rule's recorded status, "ERROR" when the recorded run never reached its
// verdicts and "-" when it did not judge the rule.
func beforeStatus(r *Rerun, rule string) string {
	if v, ok := byRule(r.Before)[rule]; ok {
		return string(v.Status)
	}
	if r.BeforeError != "" {
		return "ERROR"
	}
	return "-"
}

// afterStatus is beforeStatus for the re-run.
func afterStatus(r *Rerun, rule string) string {
	if v, ok := byRule(r.After)[rule]; ok {
		return string(v.Status)
	}
	switch {
	case !r.Ran:
		return "not run"
	case r.AfterError != "":
		return "ERROR"
	}
	return "-"
}

// ExitCode is the verification's exit code: 1 when any rule of any re-run fails after the
// patch, 2 when a re-run did not reach its verdicts, 3 when something is INCONCLUSIVE or nothing
// could be verified at all, 0 when every rule of every re-run passes.
func (p *Plan) ExitCode() int {
	ran, failed, errored, unshown := false, false, false, false
	for _, w := range p.Workloads {
		for _, r := range w.Reruns {
			if !r.Ran {
				continue
			}
			ran = true
			errored = errored || r.AfterError != ""
			unshown = unshown || len(r.After) == 0
			for _, v := range r.After {
				failed = failed || v.Status == verdict.Fail
				unshown = unshown || v.Status == verdict.Inconclusive || v.Status == verdict.NotApplicable
			}
		}
	}
	switch {
	case failed:
		return ExitFail
	case errored:
		return ExitError
	case unshown || !ran:
		return ExitInconclusive
	}
	return ExitPass
}
