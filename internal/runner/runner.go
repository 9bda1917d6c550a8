// Package runner executes scenarios end to end on a cluster: a fresh namespace, the target and its
// dependencies, observers, load, faults on schedule (always reverted, also on Ctrl-C and panic),
// the timing oracle from the live pod, verdicts, and the recorded timeline and requests for the
// report. The CLI and the e2e-framework suite both call it: one code path, two doors.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/interrupt"
	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/pause"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/seed"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// Labels put on every namespace the runner creates.
const (
	labelManaged  = "probegate.dev/managed"
	labelScenario = "probegate.dev/scenario"
)

// Options tunes a run.
type Options struct {
	// Variant overrides every scenario's target variant when set.
	Variant string
	// Custom replaces the bundled fixture with the user's own app; Images are the --image swaps
	// (for the replay command).
	Custom *scenario.TargetSpec
	Images map[string]string
	// Seed overrides every scenario's seed when non-nil.
	Seed *int64
	// Patch is a strategic-merge patch of the workload under test, applied at every install
	// (tune --verify); reports name the target as patched.
	Patch []byte
	// Keep leaves namespaces in place after the run.
	Keep bool
	// Parallel is how many scenarios may run at once, at most Slots (the cluster's port slots,
	// cluster.Slots for kind).
	Parallel int
	Slots    int
	// Logger receives progress; slog.Default when nil.
	Logger *slog.Logger
	// Progress, when set, is told what each running scenario is doing.
	Progress Progress
}

// Progress is told what each running scenario is doing (probegate run's status line on a
// terminal). Its methods are called from the scenarios' goroutines.
type Progress interface {
	// Phase says the scenario entered a phase: "start", "deploy", "schedule-start", "judge"...
	Phase(scenario, phase string)
	// Load says the scenario's load runs from start for d; ready (the ready endpoints now) and
	// active (the faults injected now) may be called until Done.
	Load(scenario string, start time.Time, d time.Duration, ready func() int, active func() []string)
	// Done says the scenario ended.
	Done(scenario string)
}

// runProgress tells a Progress, if any, about one scenario.
type runProgress struct {
	p    Progress
	name string
}

func (s runProgress) set(phase string) {
	if s.p != nil {
		s.p.Phase(s.name, phase)
	}
}

func (s runProgress) watch(obs Observation, sched *schedule, start time.Time, d time.Duration) {
	if s.p != nil {
		s.p.Load(s.name, start, d, obs.ReadyEndpoints, sched.Active)
	}
}

func (s runProgress) done() {
	if s.p != nil {
		s.p.Done(s.name)
	}
}

// PatchedSuffix ends the report's target name of a run whose workload was patched (Options.Patch).
const PatchedSuffix = " + tune patch"

// Runner runs scenarios on one cluster.
type Runner struct {
	Conn *cluster.Conn
	Kit  Kit
	Opts Options

	poolOnce sync.Once
	pool     *SlotPool

	// reportDir, set by Execute, is where each scenario's timeline is streamed while it runs;
	// dirs are the scenario directories taken in it.
	reportDir string
	dirMu     sync.Mutex
	dirs      map[string]bool
}

// Run executes one scenario in its own namespace using port slot slot, and returns its report. The
// returned error is a harness error (the verdicts could not be reached); the report then carries
// it too, with whatever was recorded up to that point. When ctx ends before the verdicts are
// reached (Ctrl-C), Run stops the load, reverts every fault with a fresh, bounded context, deletes
// the namespace and returns an error "interrupted by SIGINT at <phase>".
func (r *Runner) Run(ctx context.Context, sc *scenario.Scenario, slot int) (rep *reports.ScenarioReport, err error) {
	log := r.logger().With("scenario", sc.Name)
	seedValue := sc.Seed
	if r.Opts.Seed != nil {
		seedValue = *r.Opts.Seed
	}
	variant := sc.Target.Variant
	if r.Opts.Variant != "" {
		variant = r.Opts.Variant
	}
	rep = &reports.ScenarioReport{
		Name:        sc.Name,
		Description: sc.Description,
		Variant:     variant,
		Seed:        seedValue,
		Started:     time.Now(),
	}
	if r.Opts.Custom != nil {
		rep.Variant = ""
		rep.Target = "target " + r.Opts.Custom.Name
	}
	tl := timeline.New(time.Now())
	rep.Timeline = tl
	status := runProgress{p: r.Opts.Progress, name: sc.Name}
	status.set("start")
	defer status.done()
	// phase is what the scenario was doing, for the interruption's message; "done" once judged.
	phase := "setup"
	// teardownErr collects what failed while undoing the run (a fault revert): it is reported even
	// when the run was interrupted.
	var teardownErr error
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("scenario %s panicked: %v", sc.Name, p)
		}
		rep.Finished = time.Now()
		if ctx.Err() != nil && phase != "done" {
			if err != nil {
				log.Debug("error after the interruption", "err", err)
			}
			err = fmt.Errorf("%w at %s", interruption(ctx), phase)
		}
		err = errors.Join(err, teardownErr)
		if err != nil {
			rep.Error = err.Error()
			log.Error("scenario error", "err", err)
		}
	}()
	if stop, serr := r.streamTimeline(rep); serr != nil {
		log.Warn("stream timeline", "err", serr)
	} else {
		defer stop()
	}
	mark := func(name, detail string) {
		tl.Append(timeline.Entry{Kind: timeline.KindMark, Mark: &timeline.Mark{Name: name, Detail: detail}})
		status.set(name)
		log.Info("phase "+name, "detail", detail)
	}
	mark("start", fmt.Sprintf("variant %s, seed %d, slot %d", variant, seedValue, slot))

	path, cannot := loadPath(sc, r.Opts.Custom)
	if cannot != "" {
		// Nothing this scenario judges could be shown on this target: say so for every verdict.
		rep.Verdicts = cannotTake(sc, cannot)
		log.Warn("scenario not run", "why", cannot)
		phase = "done"
		return rep, nil
	}
	ns := namespaceName(sc.Name, seedValue, time.Now())
	if err := r.createNamespace(ctx, ns, sc.Name); err != nil {
		return rep, err
	}
	if !r.Opts.Keep {
		defer r.deleteNamespace(ns, log)
	}
	rep.Namespace = ns
	log = log.With("namespace", ns)

	phase = "deploy"
	mark("deploy", "")
	target, err := r.Kit.Deployer.Install(ctx, r.Conn, deploy.Request{
		Namespace: ns, Variant: variant, Replicas: sc.Target.Replicas,
		Bootstrap: sc.Target.Bootstrap, Slot: slot, Patch: r.Opts.Patch,
	})
	if err != nil {
		return rep, fmt.Errorf("deploy target into %s: %w", ns, err)
	}
	if target.Cleanup != nil {
		defer func() {
			cctx, cancel := interrupt.Teardown(ctx, 30*time.Second)
			defer cancel()
			if err := target.Cleanup(cctx); err != nil {
				log.Warn("clean up target", "err", err)
			}
		}()
	}
	if rep.Target == "" {
		rep.Target = target.Description
	}
	if len(r.Opts.Patch) > 0 {
		rep.Target += PatchedSuffix
	}
	pod, err := r.livePod(ctx, target)
	if err != nil {
		return rep, err
	}
	if e, werr := workloadEntry(target, pod); werr != nil {
		log.Warn("record the workload's settings", "err", werr)
	} else {
		tl.Append(e)
	}

	phase = "observers"
	obs, err := r.Kit.Observers.Start(ctx, r.Conn, target, tl)
	if err != nil {
		return rep, fmt.Errorf("start observers in %s: %w", ns, err)
	}
	defer obs.Stop()
	mark("observers-synced", "")
	attr := r.startAttribution(ctx, target, log) // conntrack attribution: attribution.go
	defer attr.stop()
	routes := r.startRouting(ctx, target, log) // kube-proxy's routing: routing.go
	defer routes.stop()

	root := seed.New(uint64(seedValue))
	sched, err := r.planFaults(sc, target, tl, root, log)
	if err != nil {
		return rep, err
	}
	// Faults are reverted whatever happens below: schedule end, error, Ctrl-C or panic. RevertAll
	// uses its own bounded context: ctx may be the cancelled one.
	defer func() {
		if rerr := sched.RevertAll(ctx); rerr != nil {
			log.Error("revert faults", "err", rerr)
			teardownErr = errors.Join(teardownErr, rerr)
		}
	}()

	phase = "load"
	mark("schedule-start", fmt.Sprintf("%d rps for %s", sc.Load.Rate, sc.Load.Duration))
	loadStartAt, loadStart := tl.Now()
	load, err := r.Kit.Load.Start(ctx, attr.loadSpec(LoadSpec{
		URL: target.URL + path, Rate: sc.Load.Rate, Duration: sc.Load.Duration,
		KeepAlive: sc.Load.KeepAlive, Timeout: sc.Load.Timeout, PodHeader: podHeader(r.Opts.Custom),
		// A user's app names its pod only in the header its target file gives, if any.
		IgnorePodHeader: r.Opts.Custom != nil && r.Opts.Custom.PodHeader == "",
	}), tl)
	if err != nil {
		return rep, fmt.Errorf("start load: %w", err)
	}
	setLoad(sched, load)
	status.watch(obs, sched, loadStartAt, sc.Load.Duration)

	schedDone := make(chan error, 1)
	schedCtx, stopSched := context.WithCancel(ctx)
	defer stopSched()
	go func() { schedDone <- sched.Run(schedCtx, loadStartAt) }()
	// An interrupt reverts the faults at once, while the load drains its requests in flight (up to
	// the request timeout), once the schedule has returned (an inject under way completes first).
	type stopped struct {
		active              []string
		schedErr, revertErr error
	}
	early := make(chan stopped, 1)
	notInterrupted := context.AfterFunc(ctx, func() {
		active := sched.Active() // what the signal interrupted, before the schedule's own exit reverts it
		st := stopped{schedErr: <-schedDone}
		st.active = append(active, sched.Active()...)
		slices.Sort(st.active)
		st.active = slices.Compact(st.active)
		st.revertErr = sched.RevertAll(ctx)
		early <- st
	})

	reqs, loadErr := waitLoad(ctx, load)
	reqs, rep.Attribution = attr.apply(reqs, tl.Entries())
	routes.record(tl)
	rep.Requests = reqs
	var schedErr error
	if notInterrupted() {
		stopSched()
		schedErr = <-schedDone
	} else {
		st := <-early
		schedErr = st.schedErr
		if len(st.active) > 0 {
			phase = "load with " + strings.Join(st.active, ", ") + " injected"
		}
		if st.revertErr != nil {
			log.Error("revert faults", "err", st.revertErr)
			teardownErr = errors.Join(teardownErr, st.revertErr)
		}
	}
	if schedErr != nil {
		load.Stop()
		return rep, schedErr
	}
	if loadErr != nil {
		return rep, fmt.Errorf("load: %w", loadErr)
	}
	if rerr := sched.RevertAll(ctx); rerr != nil {
		// A fault left in place makes the verdicts untrustworthy: stop here. The deferred report
		// names the failure, interrupted or not.
		log.Error("revert faults", "err", rerr)
		teardownErr = errors.Join(teardownErr, rerr)
		return rep, nil
	}
	loadEnd := tl.Since(time.Now())
	mark("schedule-end", fmt.Sprintf("%d requests", len(reqs)))
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}

	phase = "settle"
	mark("settle", sc.Settle.String())
	if err := pause.For(ctx, sc.Settle); err != nil {
		return rep, err
	}
	obs.Stop()
	mark("end", "")

	phase = "judge"
	status.set("judge")
	in := JudgeInput{Scenario: sc, Entries: tl.Entries(), Requests: reqs, Pod: pod, LoadStart: loadStart, LoadEnd: loadEnd}
	o, results, err := r.judge(ctx, in)
	if err != nil {
		return rep, fmt.Errorf("judge: %w", err)
	}
	rep.Oracle = o
	rep.Verdicts = results
	for _, res := range results {
		log.Info("verdict", "rule", res.Rule, "status", res.Status, "observed", res.Observed)
	}
	if ctx.Err() == nil {
		phase = "done"
	}
	return rep, nil
}

// judge runs the Judge. An interrupt while it runs lets it finish (judging is bounded); a second
// one (interrupt.Hurry) stops waiting for it.
func (r *Runner) judge(ctx context.Context, in JudgeInput) (*oracle.Oracle, []verdict.Result, error) {
	type judged struct {
		o       *oracle.Oracle
		results []verdict.Result
		err     error
	}
	done := make(chan judged, 1)
	go func() {
		var j judged
		defer func() {
			if p := recover(); p != nil {
				j = judged{err: fmt.Errorf("panicked: %v", p)}
			}
			done <- j
		}()
		j.o, j.results, j.err = r.Kit.Judge.Judge(in)
	}()
	select {
	case j := <-done:
		return j.o, j.results, j.err
	case <-interrupt.Hurry(ctx):
		return nil, nil, errors.New("skipped: interrupted again")
	}
}

// interruption is why ctx ended, for a scenario's error: the signal ("interrupted by SIGINT"),
// or the context's own cause.
func interruption(ctx context.Context) error {
	if s := interrupt.From(ctx); s != nil {
		return s
	}
	return fmt.Errorf("interrupted (%w)", context.Cause(ctx))
}

// planFaults builds every fault's instance (or its skip reason) with its own seeded stream.
func (r *Runner) planFaults(sc *scenario.Scenario, target *deploy.Target, tl *timeline.Timeline, root *seed.Source, log *slog.Logger) (*schedule, error) {
	var planned []*plannedFault
	if len(sc.Faults) > 0 && r.Kit.Faults == nil {
		return nil, fmt.Errorf("%s: no fault injectors are wired into this build", sc.File)
	}
	for i, f := range sc.Faults {
		env := FaultEnv{
			Index: i, Conn: r.Conn, Target: target, Timeline: tl,
			Rand:     root.Fork("faults/" + strconv.Itoa(i) + "/" + f.Type),
			NodeExec: r.Kit.NodeExec,
		}
		inj, skip, err := r.Kit.Faults.Build(f, env)
		if err != nil {
			return nil, fmt.Errorf("%s: faults[%d] (%s): %w", sc.File, i, f.Type, err)
		}
		planned = append(planned, &plannedFault{Index: i, Spec: f, Inj: inj, Skip: skip})
	}
	return newSchedule(planned, tl, log), nil
}

// loadAware is implemented by faults that act on the running load (overload).
type loadAware interface{ SetLoad(faults.RateSetter) }

func setLoad(s *schedule, l LoadRun) {
	for _, f := range s.faults {
		if la, ok := f.Inj.(loadAware); ok {
			la.SetLoad(l)
		}
	}
}

// waitLoad waits for the load to end; on cancellation it stops the load and still collects what
// was recorded.
func waitLoad(ctx context.Context, l LoadRun) ([]timeline.Request, error) {
	type result struct {
		reqs []timeline.Request
		err  error
	}
	done := make(chan result, 1)
	go func() {
		reqs, err := l.Wait()
		done <- result{reqs, err}
	}()
	select {
	case res := <-done:
		return res.reqs, res.err
	case <-ctx.Done():
		l.Stop()
		res := <-done
		return res.reqs, res.err
	}
}

func podHeader(custom *scenario.TargetSpec) string {
	if custom != nil {
		return custom.PodHeader
	}
	return ""
}

// loadPath is the path the scenario's load requests on the target, or why the target cannot take
// the scenario (it needs requests that take a while, and the target file names none).
func loadPath(sc *scenario.Scenario, custom *scenario.TargetSpec) (path, cannot string) {
	switch {
	case custom == nil:
		return sc.Load.Path, ""
	case sc.Load.Takes == 0:
		return custom.Requests.Default, ""
	}
	if p := custom.Requests.TakesPath(sc.Load.Takes); p != "" {
		return p, ""
	}
	return "", fmt.Sprintf("the scenario needs requests the server holds for about %s, and target %s names none (set requests.takes in its target file)",
		sc.Load.Takes, custom.Name)
}

// cannotTake is every verdict of a scenario the target cannot take: INCONCLUSIVE, saying why.
func cannotTake(sc *scenario.Scenario, why string) []verdict.Result {
	out := make([]verdict.Result, 0, len(sc.Expect))
	for _, e := range sc.Expect {
		out = append(out, verdict.Result{Rule: e.Rule, Status: verdict.Inconclusive,
			Observed: "not run on this target", Unshown: []string{why}})
	}
	return out
}

// livePod returns one running target pod: the oracle is computed from the spec the cluster runs,
// defaults and admission changes included.
func (r *Runner) livePod(ctx context.Context, t *deploy.Target) (*corev1.Pod, error) {
	pods, err := r.Conn.Client.CoreV1().Pods(t.Namespace).List(ctx, metav1.ListOptions{LabelSelector: t.Selector})
	if err != nil {
		return nil, fmt.Errorf("list target pods (%s) in %s: %w", t.Selector, t.Namespace, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no running target pod (%s) in %s", t.Selector, t.Namespace)
}

func (r *Runner) logger() *slog.Logger {
	if r.Opts.Logger != nil {
		return r.Opts.Logger
	}
	return slog.Default()
}
