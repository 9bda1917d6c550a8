package runner

import (
	"context"
	"path/filepath"
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
	width := r.width()

	together, alone := runOrder(scs, width)
	run := func(i int) { out[i] = *r.RunOne(ctx, scs[i]) }

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

// runOrder splits scs (by index) into those run side by side, width at a time, longest span
// first, and those run alone afterwards, in order. With width 1 every scenario runs alone.
// RunAll runs them so and EstimateRun packs its estimate so.
func runOrder(scs []*scenario.Scenario, width int) (together, alone []int) {
	for i, sc := range scs {
		if sc.Parallel && width > 1 {
			together = append(together, i)
		} else {
			alone = append(alone, i)
		}
	}
	sort.SliceStable(together, func(a, b int) bool { return scs[together[a]].Span() > scs[together[b]].Span() })
	return together, alone
}

// RunOne runs one scenario on the next free port slot, waiting for one (RunAll's step, and the e2e
// suite's, whose features schedule themselves). The report carries any harness error.
// A scenario the context ended before it started is "not run", with the interruption.
func (r *Runner) RunOne(ctx context.Context, sc *scenario.Scenario) *reports.ScenarioReport {
	notRun := func() *reports.ScenarioReport {
		return &reports.ScenarioReport{Name: sc.Name, Error: "not run: " + interruption(ctx).Error()}
	}
	if ctx.Err() != nil {
		return notRun()
	}
	pool := r.slots()
	slot, err := pool.Acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return notRun()
		}
		return &reports.ScenarioReport{Name: sc.Name, Error: err.Error()}
	}
	defer pool.Release(slot)
	rep, _ := r.Run(ctx, sc, slot)
	return rep
}

// width is how many scenarios run at once: Opts.Parallel, at least 1, at most Opts.Slots.
func (r *Runner) width() int { return runWidth(r.Opts.Parallel, r.Opts.Slots) }

// runWidth is how many scenarios run at once when parallel are asked for on slots port slots
// (no limit when slots is 0).
func runWidth(parallel, slots int) int {
	width := max(parallel, 1)
	if slots > 0 {
		width = min(width, slots)
	}
	return width
}

// slots returns the runner's port-slot pool, creating it for width() concurrent runs.
func (r *Runner) slots() *slotPool {
	r.poolOnce.Do(func() {
		slots := r.Opts.Slots
		if slots <= 0 {
			slots = cluster.Slots
		}
		r.pool = &slotPool{Client: r.Conn.Client, Slots: slots, Width: r.width(),
			TargetPort: cluster.TargetNodePort, ToxiproxyPort: cluster.ToxiproxyNodePort,
			LockDir: filepath.Join(cluster.CacheDir(), "slots"), LockName: slotLockName(r.Conn.Name),
			Log: r.logger()}
	})
	return r.pool
}

// slotLockName is the lock-file prefix of a cluster's port slots: its name, made a file name.
func slotLockName(cluster string) string {
	b := []byte(cluster)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "cluster"
	}
	return string(b)
}
