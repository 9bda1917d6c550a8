package runner

import (
	"context"
	"sort"
	"sync"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/reports"
)

// RunAll runs scenarios and returns their reports in the order given. Scenarios marked parallel
// share the cluster, each in its own namespace and port slot, up to Opts.Parallel at once
// (longest first, so the tail is short); the others run alone afterwards. Reports of scenarios
// that were never started (the context ended) carry the interruption as their error.
func (r *Runner) RunAll(ctx context.Context, scs []*scenario.Scenario) []reports.ScenarioReport {
	out := make([]reports.ScenarioReport, len(scs))
	width := r.Opts.Parallel
	if width < 1 {
		width = 1
	}
	if r.Opts.Slots > 0 {
		width = min(width, r.Opts.Slots)
	}

	var together, alone []int
	for i, sc := range scs {
		if sc.Parallel && width > 1 {
			together = append(together, i)
		} else {
			alone = append(alone, i)
		}
	}
	sort.SliceStable(together, func(a, b int) bool { return scs[together[a]].Span() > scs[together[b]].Span() })

	run := func(i, slot int) {
		if err := ctx.Err(); err != nil {
			out[i] = reports.ScenarioReport{Name: scs[i].Name, Error: "not run: " + context.Cause(ctx).Error()}
			return
		}
		rep, _ := r.Run(ctx, scs[i], slot)
		out[i] = *rep
	}

	slots := make(chan int, width)
	for s := 0; s < width; s++ {
		slots <- s
	}
	var wg sync.WaitGroup
	for _, i := range together {
		slot := <-slots
		wg.Add(1)
		go func(i, slot int) {
			defer wg.Done()
			defer func() { slots <- slot }()
			run(i, slot)
		}(i, slot)
	}
	wg.Wait()
	for _, i := range alone {
		run(i, 0)
	}
	return out
}
