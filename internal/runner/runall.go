package runner

import (
	"context"
	"sort"
	"sync"

	"github.com/probegate/probegate/internal/cluster"
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

	pool := r.SlotPool(width)
	notRun := func(i int) {
		out[i] = reports.ScenarioReport{Name: scs[i].Name, Error: "not run: " + interruption(ctx).Error()}
	}
	run := func(i int) {
		if ctx.Err() != nil {
			notRun(i)
			return
		}
		slot, err := pool.Acquire(ctx)
		if err != nil {
			if ctx.Err() != nil {
				notRun(i)
				return
			}
			out[i] = reports.ScenarioReport{Name: scs[i].Name, Error: err.Error()}
			return
		}
		defer pool.Release(slot)
		rep, _ := r.Run(ctx, scs[i], slot)
		out[i] = *rep
	}

	var wg sync.WaitGroup
	started := make(chan struct{}, width)
	for _, i := range together {
		started <- struct{}{} // at most width goroutines waiting for or holding a slot
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-started }()
			run(i)
		}(i)
	}
	wg.Wait()
	for _, i := range alone {
		run(i)
	}
	return out
}

// SlotPool returns the runner's port-slot pool, creating it for width concurrent runs.
func (r *Runner) SlotPool(width int) *SlotPool {
	r.poolOnce.Do(func() {
		slots := r.Opts.Slots
		if slots <= 0 {
			slots = cluster.Slots
		}
		r.pool = &SlotPool{Client: r.Conn.Client, Slots: slots, Width: width,
			TargetPort: cluster.TargetNodePort, ToxiproxyPort: cluster.ToxiproxyNodePort}
	})
	return r.pool
}
