package tune

import "fmt"

// group is the scenario runs of one workload with one set of settings.
type group struct {
	target    string
	settings  settings
	scenarios []*scenarioRun
}

// Recommend reads the evidence of runs and recommends each probe and shutdown field of every
// workload they ran.
func Recommend(runs []Run, opts Options) Result {
	opts = opts.withDefaults()
	res := Result{}
	for _, r := range runs {
		res.Runs = append(res.Runs, r.Dir)
	}
	srs, skipped := scenarioRuns(runs)
	res.Skipped = skipped
	var groups []*group
	index := map[string]*group{}
	for _, s := range srs {
		k := s.settings.key(s.target)
		g := index[k]
		if g == nil {
			g = &group{target: s.target, settings: s.settings}
			index[k] = g
			groups = append(groups, g)
		}
		g.scenarios = append(g.scenarios, s)
	}
	for _, g := range groups {
		res.Workloads = append(res.Workloads, recommendWorkload(g, opts))
	}
	return res
}

func recommendWorkload(g *group, opts Options) Workload {
	st := g.settings
	w := Workload{Kind: st.Kind, Name: st.Name, Container: st.Container, Target: g.target, SpecSource: st.Source}
	for _, s := range g.scenarios {
		w.Scenarios = append(w.Scenarios, fmt.Sprintf("%s: %s", s.run, s.label))
	}
	w.Recommendations = append(w.Recommendations, recommendStartup(g, opts)...)
	w.Recommendations = append(w.Recommendations, recommendReadinessTimeout(g))
	w.Recommendations = append(w.Recommendations, recommendLiveness(g)...)
	wd := recommendWithdrawal(g, opts)
	w.Recommendations = append(w.Recommendations, wd, recommendGrace(g, wd, opts))
	var startup []ScenarioRef
	for i := range w.Recommendations {
		r := &w.Recommendations[i]
		r.Motivated = motivated(r.Evidence)
		if r.Field == "startupProbe" {
			startup = r.Motivated
		}
	}
	for i := range w.Recommendations {
		// Liveness's initial delay goes only because a startup probe is added: the same runs.
		if r := &w.Recommendations[i]; r.Field == "livenessProbe.initialDelaySeconds" && len(r.Motivated) == 0 {
			r.Motivated = startup
		}
	}
	return w
}

// motivated lists, once each and in order, the scenario runs of the evidence a formula used.
func motivated(ev []Evidence) []ScenarioRef {
	var out []ScenarioRef
	seen := map[ScenarioRef]bool{}
	for _, e := range ev {
		ref := ScenarioRef{Run: e.Run, Scenario: e.Scenario}
		if !e.ignored && !seen[ref] {
			seen[ref] = true
			out = append(out, ref)
		}
	}
	return out
}
