package runner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/scenario"
)

// bundledOverhead and appOverhead are what one scenario takes beyond what it declares (its span and the requests it holds
// at the load's end): a namespace, PostgreSQL, toxiproxy and the target deployed and rolled out,
// observers started, the verdicts judged, the namespace deleted. Measured on a warm 2-core kind
// cluster: the bundled target's 13 scenarios took 10.5–15 s each beyond that (the default suite ran
// 546 s, estimated 551 s), podinfo's 17–19 s.
const (
	bundledOverhead = 12 * time.Second
	appOverhead     = 18 * time.Second
)

// estimate is a scenario's expected wall time on the target (custom, or the bundled target when
// nil): the overhead, its span (load and settle; faults run inside the load) and, at the load's
// end, the requests it holds (load.takes) draining. A fault sized atLeast a moment of the target's
// own probe timing may stretch the load beyond this; the estimate counts its declared minimum.
func estimate(sc *scenario.Scenario, custom *scenario.TargetSpec) time.Duration {
	overhead := bundledOverhead
	if custom != nil {
		overhead = appOverhead
	}
	return overhead + sc.Span() + sc.Load.Takes
}

// plannedScenario is one scenario of an estimated run.
type plannedScenario struct {
	Scenario *scenario.Scenario
	// Estimate is its expected wall time; NotApplicable, when set, says why the target or the
	// cluster does not take it (it is reported NOT APPLICABLE and takes no time).
	Estimate      time.Duration
	NotApplicable string
}

// RunEstimate is what a run of a set of scenarios is expected to take.
type RunEstimate struct {
	// Scenarios are the scenarios asked for, in order.
	Scenarios []plannedScenario
	// Width is how many run side by side.
	Width int
	// Total is the expected wall time: the side-by-side scenarios packed as RunAll runs them
	// (longest span first, each onto the first free lane), then the others one at a time.
	Total time.Duration
}

// EstimateRun estimates a run of scs on the target (custom, or the bundled target when nil) with
// parallel scenarios side by side (0: the default for a one-node local cluster). A scenario the
// target does not take by its declaration (the run's own notApplicable), or that needs more nodes
// than the cluster's nodes schedulable ones (0: unknown, counted as taken), is NOT APPLICABLE and
// costs nothing. Nothing is deployed or asked of a cluster.
func EstimateRun(scs []*scenario.Scenario, custom *scenario.TargetSpec, nodes, parallel int) RunEstimate {
	if parallel <= 0 {
		parallel = cluster.DefaultParallel(1)
	}
	e := RunEstimate{Width: runWidth(parallel, cluster.Slots)}
	var taken []*scenario.Scenario
	var est []time.Duration
	for _, sc := range scs {
		p := plannedScenario{Scenario: sc, NotApplicable: notApplicable(sc, custom)}
		if p.NotApplicable == "" && nodes > 0 && sc.Target.Nodes > nodes {
			p.NotApplicable = nodesMissing(sc, nodes)
		}
		if p.NotApplicable == "" {
			p.Estimate = estimate(sc, custom)
			taken = append(taken, sc)
			est = append(est, p.Estimate)
		}
		e.Scenarios = append(e.Scenarios, p)
	}
	e.Total = packed(taken, est, e.Width)
	return e
}

// packed is the wall time of scs (with estimates est) run as RunAll runs them at width.
func packed(scs []*scenario.Scenario, est []time.Duration, width int) time.Duration {
	together, alone := runOrder(scs, width)
	lanes := make([]time.Duration, width)
	for _, i := range together {
		free := slices.Index(lanes, slices.Min(lanes))
		lanes[free] += est[i]
	}
	total := slices.Max(lanes)
	for _, i := range alone {
		total += est[i]
	}
	return total
}

// Run lists the scenarios that will run, in order.
func (e RunEstimate) Run() []plannedScenario {
	var out []plannedScenario
	for _, p := range e.Scenarios {
		if p.NotApplicable == "" {
			out = append(out, p)
		}
	}
	return out
}

// String says what the run takes: how many scenarios, how long, how many side by side.
func (e RunEstimate) String() string {
	return fmt.Sprintf("%d scenarios, about %s (%d side by side)", len(e.Run()), e.Total.Round(time.Second), e.Width)
}

// Left says which scenarios the run leaves out as NOT APPLICABLE, each with why ("" for none).
func (e RunEstimate) Left() string {
	var na []string
	for _, p := range e.Scenarios {
		if p.NotApplicable != "" {
			na = append(na, fmt.Sprintf("%s (%s)", p.Scenario.Name, p.NotApplicable))
		}
	}
	return strings.Join(na, "; ")
}

// Fit returns nil when the run fits budget, else a one-line error saying what it would take and
// which scenarios to drop for it to fit (the fewest, each time the one whose absence saves most).
func (e RunEstimate) Fit(budget time.Duration) error {
	if e.Total <= budget {
		return nil
	}
	run := e.Run()
	var drop []string
	total := e.Total
	for total > budget && len(run) > 0 {
		best, bestTotal := -1, time.Duration(0)
		for i := range run {
			rest := slices.Delete(slices.Clone(run), i, i+1)
			if t := packedPlan(rest, e.Width); best < 0 || t < bestTotal {
				best, bestTotal = i, t
			}
		}
		drop = append(drop, run[best].Scenario.Name)
		run = slices.Delete(run, best, best+1)
		total = bestTotal
	}
	return fmt.Errorf("the chosen scenarios take about %s with %d side by side, over the %s budget: drop %s (then about %s), or raise --budget",
		e.Total.Round(time.Second), e.Width, budget, strings.Join(drop, ", "), total.Round(time.Second))
}

// packedPlan is packed for plannedScenario scenarios.
func packedPlan(run []plannedScenario, width int) time.Duration {
	scs := make([]*scenario.Scenario, len(run))
	est := make([]time.Duration, len(run))
	for i, p := range run {
		scs[i], est[i] = p.Scenario, p.Estimate
	}
	return packed(scs, est, width)
}
