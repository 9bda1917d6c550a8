// Package verify closes tune's loop: it applies the recommended patch to the target in fresh
// namespaces, re-runs exactly the scenario runs whose measurements motivated each change (same
// scenario, variant and seed), and sets the verdicts before (from the input reports) beside the
// verdicts after. It refuses to verify what tune left alone, what the patch cannot carry (a
// delay that is the app's own) and what no number fixes (a liveness handler that checks a
// dependency): those are reported, never applied.
package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/tune"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// Outcome is what verification concluded about one recommendation.
type Outcome string

// Outcomes, the first four for applied changes.
const (
	Fixed        Outcome = "fixed"          // a motivating run failed before; every rule passes after
	Holds        Outcome = "holds"          // every rule passed before and after: nothing failing was shown
	NotFixed     Outcome = "not fixed"      // a rule of a motivating run fails after the change
	Inconclusive Outcome = "inconclusive"   // nothing fails after, but something could not be shown
	NotApplied   Outcome = "not applied"    // a change the patch cannot carry (the app's own, unknown spec)
	Refused      Outcome = "refused"        // no number fixes it (cannot-tune), or a number would hide it
	Unverifiable Outcome = "not verifiable" // tune changed nothing, or no recorded run motivated the change
)

// Plan is what verification applies and re-runs, per tuned workload.
type Plan struct {
	Workloads []*Workload
}

// Workload is one tuned workload: the patch of the changes verified, and the runs to repeat.
type Workload struct {
	tune.Workload
	// Variant is the fixture variant the runs deployed ("" for a user's target file).
	Variant string
	// Patch is the strategic-merge patch of the applied changes only; nil when none is applied.
	Patch   []byte
	Changes []*Change
	Reruns  []*Rerun
}

// Change is one recommendation and what verification does with it.
type Change struct {
	Rec     tune.Recommendation
	Applied bool
	// Outcome and Why are set by Plan for what is not applied, by Run for the rest.
	Outcome Outcome
	Why     string
	// Reruns index Workload.Reruns: the runs that motivated the change.
	Reruns []int
}

// Rerun is one recorded scenario run to repeat with the patch.
type Rerun struct {
	// Scenario is the catalogue's scenario with the recorded seed and variant.
	Scenario *scenario.Scenario
	Label    string
	From     tune.ScenarioRef
	Before   []verdict.Result
	// BeforeError and AfterError are harness errors of the recorded run and of the re-run.
	BeforeError string
	After       []verdict.Result
	AfterError  string
	Ran         bool
}

// Scenarios are every workload's re-runs, for the runner's preflight (the variants to load).
func (p *Plan) Scenarios() []*scenario.Scenario {
	var out []*scenario.Scenario
	for _, w := range p.Workloads {
		for _, r := range w.Reruns {
			out = append(out, r.Scenario)
		}
	}
	return out
}

// Catalogue finds a scenario by name (*scenario.Catalogue).
type Catalogue interface {
	Get(name string) (*scenario.Scenario, bool)
}

// NewPlan decides, from tune's result on runs, what to apply and re-run. custom says whether a
// target file is given (runs of a user's app need it; runs of the bundled fixture must not have
// it).
func NewPlan(res tune.Result, runs []tune.Run, cat Catalogue, custom bool) (*Plan, error) {
	byDir := map[string]*reports.Report{}
	for _, r := range runs {
		byDir[r.Dir] = r.Report
	}
	p := &Plan{}
	for _, w := range res.Workloads {
		pw, err := planWorkload(w, byDir, cat, custom)
		if err != nil {
			return nil, err
		}
		p.Workloads = append(p.Workloads, pw)
	}
	return p, nil
}

func planWorkload(w tune.Workload, byDir map[string]*reports.Report, cat Catalogue, custom bool) (*Workload, error) {
	pw := &Workload{Workload: w}
	deep := slices.IndexFunc(w.Recommendations, func(r tune.Recommendation) bool {
		return r.Status == tune.CannotTune && strings.HasPrefix(r.Field, "livenessProbe")
	})
	rerunOf := map[string]int{}
	var applied []tune.Recommendation
	for _, rec := range w.Recommendations {
		c := &Change{Rec: rec}
		pw.Changes = append(pw.Changes, c)
		switch {
		case rec.Status == tune.Keep:
			c.Outcome, c.Why = Unverifiable, "tune keeps the current value: nothing to verify"
			continue
		case rec.Status == tune.LeftAlone:
			c.Outcome, c.Why = Unverifiable, "tune left it alone ("+rec.Why+"): there is no number to verify"
			continue
		case rec.Status == tune.CannotTune:
			c.Outcome, c.Why = Refused, "cannot-tune: "+rec.Why+"; the handler is wrong, not the numbers, so no patch is verified for it"
			continue
		case !rec.Patched():
			c.Outcome, c.Why = NotApplied, "not in the patch: "+rec.NotPatched
			continue
		case deep >= 0 && strings.HasPrefix(rec.Field, "livenessProbe"):
			c.Outcome, c.Why = Refused, fmt.Sprintf("the liveness handler checks a dependency (%s is cannot-tune): a longer fuse would only hide its restarts, so %s → %s is not applied",
				w.Recommendations[deep].Field, rec.Field, rec.Recommended)
			continue
		case len(rec.Motivated) == 0:
			c.Outcome, c.Why = Unverifiable, "no recorded scenario run set this value (it rests on the spec's arithmetic): not applied, nothing to re-run"
			continue
		}
		var idx []int
		var why []string
		for _, ref := range rec.Motivated {
			i, ok := rerunOf[ref.Run+"\x00"+ref.Scenario]
			if !ok {
				r, reason, err := newRerun(ref, byDir, cat, custom)
				if err != nil {
					return nil, err
				}
				if reason != "" {
					why = append(why, reason)
					continue
				}
				i = slices.IndexFunc(pw.Reruns, func(o *Rerun) bool { return o.same(r) })
				if i < 0 {
					i = len(pw.Reruns)
					pw.Reruns = append(pw.Reruns, r)
				}
				rerunOf[ref.Run+"\x00"+ref.Scenario] = i
			}
			if !slices.Contains(idx, i) {
				idx = append(idx, i)
			}
		}
		if len(why) > 0 {
			// Part of the evidence cannot be repeated: the change is not verified on the rest alone.
			c.Outcome, c.Why = Unverifiable, strings.Join(why, "; ")+": not applied"
			continue
		}
		c.Applied, c.Reruns = true, idx
		applied = append(applied, rec)
		if pw.Variant == "" {
			pw.Variant = pw.Reruns[idx[0]].Scenario.Target.Variant
		}
	}
	pw.Reruns = keepUsed(pw)
	patch, err := tune.WorkloadPatch(w, applied)
	if err != nil {
		return nil, fmt.Errorf("verify %s/%s: %w", w.Kind, w.Name, err)
	}
	pw.Patch = patch
	return pw, nil
}

// newRerun finds the recorded scenario run ref and the catalogue's scenario to repeat it, or says
// why it cannot be repeated. An error is bad input (the run is not among those read).
func newRerun(ref tune.ScenarioRef, byDir map[string]*reports.Report, cat Catalogue, custom bool) (*Rerun, string, error) {
	rep := byDir[ref.Run]
	if rep == nil {
		return nil, "", fmt.Errorf("verify: run %s is not among the report directories read", ref.Run)
	}
	i := slices.IndexFunc(rep.Scenarios, func(s reports.ScenarioReport) bool { return label(s) == ref.Scenario })
	if i < 0 {
		return nil, "", fmt.Errorf("verify: %s has no scenario run %s", ref.Run, ref.Scenario)
	}
	s := rep.Scenarios[i]
	switch {
	case s.Variant == "" && !custom:
		return nil, fmt.Sprintf("%s ran against your own target (%s): pass the same --target file to re-run it", ref.Scenario, s.Target), nil
	case s.Variant != "" && custom:
		return nil, fmt.Sprintf("%s ran the bundled fixture, and --target names your own app", ref.Scenario), nil
	}
	sc, ok := cat.Get(s.Name)
	if !ok {
		return nil, fmt.Sprintf("scenario %s is not in this build's catalogue (a scenario file cannot be re-run from its report)", s.Name), nil
	}
	cp := *sc
	cp.Seed = s.Seed
	if s.Variant != "" {
		cp.Target.Variant = s.Variant
	}
	return &Rerun{Scenario: &cp, Label: ref.Scenario, From: ref, Before: s.Verdicts, BeforeError: s.Error}, "", nil
}

// label is how tune names a scenario run: "name/variant", or the name for a user's target.
func label(s reports.ScenarioReport) string {
	if s.Variant == "" {
		return s.Name
	}
	return s.Name + "/" + s.Variant
}

// same reports whether two reruns repeat the same scenario, variant and seed (two report
// directories holding the same run, or a replay): it runs once.
func (r *Rerun) same(o *Rerun) bool {
	return r.Scenario.Name == o.Scenario.Name && r.Scenario.Target.Variant == o.Scenario.Target.Variant && r.Scenario.Seed == o.Scenario.Seed
}

// keepUsed drops reruns only changes that were not applied pointed at, renumbering the changes'.
func keepUsed(w *Workload) []*Rerun {
	used := make([]bool, len(w.Reruns))
	for _, c := range w.Changes {
		for _, i := range c.Reruns {
			used[i] = true
		}
	}
	var out []*Rerun
	renum := map[int]int{}
	for i, r := range w.Reruns {
		if used[i] {
			renum[i] = len(out)
			out = append(out, r)
		}
	}
	for _, c := range w.Changes {
		for j, i := range c.Reruns {
			c.Reruns[j] = renum[i]
		}
	}
	return out
}
