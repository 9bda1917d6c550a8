// Package soak measures how stable verdicts are across repeated runs of the same suite: a verdict
// that is PASS in one run and FAIL or INCONCLUSIVE in another is a flip, and every flip is either a
// flaky rule, a flaky target or a harness bug.
package soak

import (
	"fmt"
	"sort"
	"strings"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// Key names one verdict of one scenario run against one target variant.
type Key struct {
	Scenario, Variant, Rule string
}

func (k Key) String() string { return fmt.Sprintf("%s/%s %s", k.Scenario, k.Variant, k.Rule) }

// errorRule stands for a scenario the harness could not finish (it has no verdicts to compare).
const errorRule = "(scenario error)"

// Flip is a verdict whose status differed between runs.
type Flip struct {
	Key Key
	// Statuses counts each status seen, e.g. {"PASS": 4, "FAIL": 1}.
	Statuses map[string]int
}

func (f Flip) String() string {
	names := make([]string, 0, len(f.Statuses))
	for s := range f.Statuses {
		names = append(names, s)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, s := range names {
		parts[i] = fmt.Sprintf("%s×%d", s, f.Statuses[s])
	}
	return f.Key.String() + ": " + strings.Join(parts, " ")
}

// Result is the stability of a set of runs.
type Result struct {
	Runs     int
	Verdicts int // asserted verdicts judged over all runs
	// Inconclusive counts INCONCLUSIVE asserted verdicts over all runs (a scenario error counts as one).
	Inconclusive int
	// Flips are asserted verdicts whose status differed; Unasserted the other verdicts that did
	// (a variant's rules beside its designated ones: shown, not counted).
	Flips      []Flip
	Unasserted []Flip
}

// Asserted is the set of verdicts the suite and the mutation matrix assert: every verdict of the
// good target (each must PASS) and each variant row's designated rule and its also-rules (each
// must FAIL). A scenario error is always asserted: the run has nothing to compare.
func Asserted(good string, m *scenario.Matrix) func(Key) bool {
	rows := map[Key]bool{}
	if m != nil {
		for _, mu := range m.Mutations {
			for _, rule := range mu.Rules() {
				rows[Key{mu.Scenario, mu.Variant, rule}] = true
			}
		}
	}
	return func(k Key) bool { return k.Variant == good || k.Rule == errorRule || rows[k] }
}

// All asserts every verdict.
func All(Key) bool { return true }

// InconclusiveRate is Inconclusive over Verdicts (0 with no verdicts).
func (r Result) InconclusiveRate() float64 {
	if r.Verdicts == 0 {
		return 0
	}
	return float64(r.Inconclusive) / float64(r.Verdicts)
}

// Compare judges the stability of runs, each the report of one run of the same suite. A verdict
// missing from some runs (its scenario was not run there) is compared over the runs that have it.
// asserted picks the verdicts counted (All, or Asserted); the others' flips are listed apart.
func Compare(runs []*reports.Report, asserted func(Key) bool) Result {
	res := Result{Runs: len(runs)}
	seen := map[Key]map[string]int{}
	note := func(k Key, status string) {
		if seen[k] == nil {
			seen[k] = map[string]int{}
		}
		seen[k][status]++
	}
	for _, run := range runs {
		for _, sc := range run.Scenarios {
			variant := sc.Variant
			if variant == "" {
				variant = sc.Target
			}
			if sc.Error != "" {
				res.Verdicts++
				res.Inconclusive++
				note(Key{sc.Name, variant, errorRule}, "ERROR")
				continue
			}
			if sc.NotApplicable != "" { // nothing ran: neither a verdict nor a flip
				continue
			}
			note(Key{sc.Name, variant, errorRule}, "RAN")
			for _, v := range sc.Verdicts {
				k := Key{sc.Name, variant, v.Rule}
				if asserted(k) {
					res.Verdicts++
					if v.Status == verdict.Inconclusive {
						res.Inconclusive++
					}
				}
				note(k, string(v.Status))
			}
		}
	}
	for k, statuses := range seen {
		switch {
		case len(statuses) < 2:
		case asserted(k):
			res.Flips = append(res.Flips, Flip{Key: k, Statuses: statuses})
		default:
			res.Unasserted = append(res.Unasserted, Flip{Key: k, Statuses: statuses})
		}
	}
	for _, fs := range [][]Flip{res.Flips, res.Unasserted} {
		sort.Slice(fs, func(i, j int) bool { return fs[i].Key.String() < fs[j].Key.String() })
	}
	return res
}
