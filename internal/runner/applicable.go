package runner

import (
	"fmt"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/verdict"
)

// notApplicable says why the target, by its own declaration, does not take sc ("" when it does):
// the scenario needs requests the server holds a while and the target file names none, or one of
// its faults needs what the declaration rules out (a dependency to slow, a stall endpoint, a
// Deployment). It is decided before anything is deployed; the bundled target declares everything.
func notApplicable(sc *scenario.Scenario, custom *scenario.TargetSpec) string {
	if custom == nil {
		return ""
	}
	if _, cannot := loadPath(sc, custom); cannot != "" {
		return cannot
	}
	d := declared(custom)
	for i, f := range sc.Faults {
		if why := faults.NotApplicable(faults.Spec{Type: f.Type, Params: f.Params}, d); why != "" {
			return fmt.Sprintf("faults[%d] %s: %s", i, f.Type, why)
		}
	}
	return ""
}

// declared is what a target file states about the app, for faults.NotApplicable.
func declared(t *scenario.TargetSpec) faults.Declared {
	d := faults.Declared{Name: t.Name, Stall: t.Stall != nil, Workload: t.Workload.Kind}
	for _, dep := range t.Dependencies {
		d.Dependencies = append(d.Dependencies, dep.Name)
	}
	return d
}

// notApplicableVerdicts lists every verdict of a scenario the target does not take, NOT APPLICABLE,
// each saying why.
func notApplicableVerdicts(sc *scenario.Scenario, why string) []verdict.Result {
	out := make([]verdict.Result, 0, len(sc.Expect))
	for _, e := range sc.Expect {
		out = append(out, verdict.Result{Rule: e.Rule, Status: verdict.NotApplicable, Observed: "not run: " + why})
	}
	return out
}
