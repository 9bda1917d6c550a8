package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/probegate/probegate/internal/verdict"
)

// Confirmation statuses: what running a finding's scenario on a cluster showed.
const (
	// Confirmed: a verdict the finding predicts to fail FAILed.
	Confirmed = "confirmed"
	// Refuted: every verdict the finding predicts to fail PASSed in a run that shows its fault
	// reached the workload: every verdict judging a fault's effect PASSed, none was INCONCLUSIVE.
	Refuted = "refuted"
	// Unconfirmed: the run could not show either (a skipped fault, an INCONCLUSIVE verdict, a fault
	// effect that FAILed, a scenario that did not run, or no verdict of the scenario judges the
	// finding).
	Unconfirmed = "inconclusive"
)

// Confirmation is the outcome of running a finding's scenario against the linted workload.
type Confirmation struct {
	Status   string `json:"status"`
	Scenario string `json:"scenario"`
	// Verdicts are the outcomes of the scenario rules the finding predicts to FAIL.
	Verdicts []ScenarioVerdict `json:"verdicts,omitempty"`
	// Why says what the status rests on, in a sentence.
	Why string `json:"why"`
	// Report is the report directory of the run.
	Report string `json:"report,omitempty"`
}

// ScenarioVerdict is one verdict of a scenario run, as confirmation reads it.
type ScenarioVerdict struct {
	Rule     string         `json:"rule"`
	Status   verdict.Status `json:"status"`
	Observed string         `json:"observed,omitempty"`
}

// ScenarioRun is what a confirming run of one scenario produced: its verdicts, or why it did not
// run.
type ScenarioRun struct {
	Scenario string
	Verdicts []ScenarioVerdict
	Error    string
	Report   string
}

// Confirm judges finding f of rule r by the run of r's scenario: confirmed when a verdict r
// predicts to fail FAILed; refuted when all of them PASSed and the run shows its faults reached the
// workload (unreached is empty; and unless f says a PASS shows little, f.PassShowsLittle);
// inconclusive otherwise, saying why.
func Confirm(r *Rule, f *Finding, run ScenarioRun) Confirmation {
	c := Confirmation{Status: Unconfirmed, Scenario: run.Scenario, Report: run.Report}
	if run.Error != "" {
		c.Why = "the scenario did not complete: " + run.Error
		return c
	}
	if len(r.Predicts) == 0 {
		c.Why = fmt.Sprintf("no verdict of %s judges what %s predicts; the run's report shows what happened", run.Scenario, r.ID)
		for _, v := range run.Verdicts {
			if v.Status == verdict.Inconclusive {
				c.Why += fmt.Sprintf(" (and the run could not show much: %s was INCONCLUSIVE: %s)", v.Rule, v.Observed)
				break
			}
		}
		return c
	}
	byRule := map[string]ScenarioVerdict{}
	for _, v := range run.Verdicts {
		byRule[v.Rule] = v
	}
	var failed, passed, other []string
	for _, rule := range r.Predicts {
		v, ok := byRule[rule]
		if !ok {
			other = append(other, rule+" was not judged")
			continue
		}
		c.Verdicts = append(c.Verdicts, v)
		switch v.Status {
		case verdict.Fail:
			failed = append(failed, fmt.Sprintf("%s FAILed (%s)", rule, v.Observed))
		case verdict.Pass:
			passed = append(passed, rule)
		default:
			other = append(other, fmt.Sprintf("%s was %s (%s)", rule, v.Status, v.Observed))
		}
	}
	gap := unreached(run, r.Predicts)
	switch {
	case len(failed) > 0:
		c.Status = Confirmed
		c.Why = strings.Join(failed, "; ")
	case len(other) > 0:
		c.Why = strings.Join(other, "; ")
	case gap != "":
		c.Why = fmt.Sprintf("%s PASSed, but the run does not show %s's faults reached the workload: %s", strings.Join(passed, " and "), run.Scenario, gap)
	default:
		c.Status = Refuted
		c.Why = fmt.Sprintf("%s PASSed on this workload: the problem %s predicts did not show under %s", strings.Join(passed, " and "), r.ID, run.Scenario)
		if f.PassShowsLittle != "" {
			c.Status = Unconfirmed
			c.Why += "; but that does not refute it: " + f.PassShowsLittle
		}
	}
	return c
}

// unreached says why run cannot show that its faults reached the workload, or "" when it can. A PASS
// of the predicted verdicts refutes only a run that exercised the workload: a verdict that judges a
// fault's effect (verdict.NeedsFaultEffect, or a rule this build does not know) which FAILed may
// mean the fault never reached the app (readiness "never withdrawn" under a freeze that stopped an
// entrypoint wrapper), and an INCONCLUSIVE verdict means the run could not see part of what it
// judges (a skipped or unproven fault, a watch gap). A FAIL of another rule shows the fault did
// something, so it does not count here. The predicted verdicts themselves are judged by Confirm.
func unreached(run ScenarioRun, predicted []string) string {
	var why []string
	for _, v := range run.Verdicts {
		if slices.Contains(predicted, v.Rule) {
			continue
		}
		switch v.Status {
		case verdict.Inconclusive:
			why = append(why, fmt.Sprintf("%s was INCONCLUSIVE (%s)", v.Rule, v.Observed))
		case verdict.Fail:
			if rule, ok := verdict.Lookup(v.Rule); ok && rule.Needs&verdict.NeedsFaultEffect == 0 {
				continue
			}
			why = append(why, fmt.Sprintf("%s FAILed (%s)", v.Rule, v.Observed))
		}
	}
	return strings.Join(why, "; ")
}

// HowToConfirm says how a finding of r is shown on a cluster: its scenario's command and what it
// FAILs when the finding is right, or (no scenario) the rule's ConfirmNote.
func (r *Rule) HowToConfirm() string {
	if r.Scenario == "" {
		return r.ConfirmNote
	}
	s := "probegate run --scenario " + r.Scenario + " --target <target file> (--variant NAME for a bundled fixture), or probegate lint --confirm"
	if len(r.Predicts) == 0 {
		return s + "; no verdict of " + r.Scenario + " judges it: read the run's report"
	}
	return s + "; it FAILs " + strings.Join(r.Predicts, " or ") + " when the finding is right"
}

// Line is the confirmation in one line: status, scenario, why, report.
func (c *Confirmation) Line() string {
	s := fmt.Sprintf("%s by %s: %s", c.Status, c.Scenario, c.Why)
	if c.Report != "" {
		s += " (report " + c.Report + ")"
	}
	return s
}

// Confirmations counts a report's findings by confirmation status ("" for findings not confirmed).
func (r *Report) Confirmations() map[string]int {
	out := map[string]int{}
	for _, f := range r.Findings {
		if f.Confirmation != nil {
			out[f.Confirmation.Status]++
		}
	}
	return out
}
