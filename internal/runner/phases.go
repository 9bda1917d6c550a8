package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/interrupt"
	"github.com/probegate/probegate/internal/pause"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/seed"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/reports"
)

// scenarioRun is one scenario's run in progress: what Run's phases hand on to each other. Each
// phase records what it started in the report and the timeline, and registers with onEnd what
// must be undone when Run returns (namespace, target, watchers, faults), whatever ends it.
type scenarioRun struct {
	r       *Runner
	sc      *scenario.Scenario
	variant string
	seed    int64
	rep     *reports.ScenarioReport
	tl      *timeline.Timeline
	log     *slog.Logger
	status  runProgress
	// phase is what the scenario was doing, for the interruption's message; "done" once judged.
	phase string
	// teardownErr collects what failed while undoing the run (a fault revert): it is reported even
	// when the run was interrupted.
	teardownErr error
	// cleanups are what undo runs, last registered first.
	cleanups []func()

	// What the phases produced.
	target    *deploy.Target
	pod       *corev1.Pod   // the live target pod the oracle is computed from
	nodes     []corev1.Node // the cluster's nodes after deploy (placement, routing watches); nil when unlisted
	obs       observation
	attr      *connAttribution
	door      *doorRun
	routes    *routeWatch
	sched     *schedule
	nodeProcs faults.NodeProcs // the nodes' processes, for faults that act on them (nodeAccess)
	// pauseNode stops and resumes a node (node-loss), pauseHow says how (nodeAccess).
	pauseNode func(ctx context.Context, node string, pause bool) error
	pauseHow  string
	reqs      []timeline.Request
	loadStart time.Duration // timeline offsets of the load's (and the schedule's) start and end
	loadEnd   time.Duration
	// rolloutEnd, when set, ends a load sized to a rollout's bound once the rollout is complete.
	rolloutEnd *rolloutEnd
}

// newScenarioRun starts sc's report and timeline with the runner's variant and seed overrides.
func (r *Runner) newScenarioRun(sc *scenario.Scenario) *scenarioRun {
	s := &scenarioRun{r: r, sc: sc, seed: sc.Seed, variant: sc.Target.Variant, phase: "setup",
		log: r.logger().With("scenario", sc.Name)}
	if r.Opts.Seed != nil {
		s.seed = *r.Opts.Seed
	}
	if r.Opts.Variant != "" {
		s.variant = r.Opts.Variant
	}
	s.rep = &reports.ScenarioReport{
		Name:        sc.Name,
		Description: sc.Description,
		Variant:     s.variant,
		Seed:        s.seed,
		Started:     time.Now(),
	}
	if r.Opts.Custom != nil {
		s.rep.Variant = ""
		s.rep.Target = "target " + r.Opts.Custom.Name
	}
	s.rep.Replay = replayCommand(s.rep, r.Opts.Custom, r.Opts.Images)
	s.tl = timeline.New(time.Now())
	s.rep.Timeline = s.tl
	s.status = runProgress{p: r.Opts.Progress, name: sc.Name}
	s.status.set("start")
	return s
}

// onEnd registers f to run when Run returns, before what was registered earlier.
func (s *scenarioRun) onEnd(f func()) { s.cleanups = append(s.cleanups, f) }

// undo runs the cleanups, last registered first; each one runs even when a later one panicked.
func (s *scenarioRun) undo() {
	for _, f := range s.cleanups {
		defer f()
	}
}

// finish ends the report: a panic becomes the run's error, an interruption before the verdicts
// replaces it ("interrupted by SIGINT at <phase>"), and what failed while undoing the run is
// added. It returns the run's error.
func (s *scenarioRun) finish(ctx context.Context, panicked any, err error) error {
	if panicked != nil {
		err = fmt.Errorf("scenario %s panicked: %v", s.sc.Name, panicked)
	}
	s.rep.Finished = time.Now()
	if ctx.Err() != nil && s.phase != "done" {
		if err != nil {
			s.log.Debug("error after the interruption", "err", err)
		}
		err = fmt.Errorf("%w at %s", interruption(ctx), s.phase)
	}
	err = errors.Join(err, s.teardownErr)
	if err != nil {
		s.rep.Error = err.Error()
		s.log.Error("scenario error", "err", err)
	}
	return err
}

// streamTimeline streams the timeline to the report directory while the run lasts (stream.go).
func (s *scenarioRun) streamTimeline() {
	stop, err := s.r.streamTimeline(s.rep)
	if err != nil {
		s.log.Warn("stream timeline", "err", err)
		return
	}
	s.onEnd(stop)
}

// mark records that the run entered a phase, on the timeline, the progress line and the log.
func (s *scenarioRun) mark(name, detail string) {
	s.tl.Append(timeline.Entry{Kind: timeline.KindMark, Mark: &timeline.Mark{Name: name, Detail: detail}})
	s.status.set(name)
	s.log.Info("phase "+name, "detail", detail)
}

// notRun says for every verdict that nothing the scenario judges could be shown on this target.
func (s *scenarioRun) notRun(why string) {
	s.rep.Verdicts = cannotTake(s.sc, why)
	s.log.Warn("scenario not run", "why", why)
	s.phase = "done"
}

// notApplicable says the target does not take the scenario, and why: nothing is deployed.
func (s *scenarioRun) notApplicable(why string) {
	s.rep.NotApplicable = why
	s.rep.Verdicts = notApplicableVerdicts(s.sc, why)
	s.log.Info("scenario not applicable", "why", why)
	s.phase = "done"
}

// createNamespace creates the scenario's own namespace, deleted when Run returns unless kept. A
// scenario that will run the node agent gets a namespace whose Pod Security admits it.
func (s *scenarioRun) createNamespace(ctx context.Context) error {
	ns := namespaceName(s.sc.Name, s.seed, time.Now())
	var labels map[string]string
	if needsNodeAccess(s.sc) && s.r.kit.nodeExecOn == nil {
		labels = map[string]string{podSecurityEnforce: "privileged"}
	}
	if err := s.r.createNamespace(ctx, ns, s.sc.Name, labels); err != nil {
		return err
	}
	if !s.r.Opts.Keep {
		log := s.log
		s.onEnd(func() { s.r.deleteNamespace(ns, log) })
	}
	s.rep.Namespace = ns
	s.log = s.log.With("namespace", ns)
	return nil
}

// deploy installs the target into the namespace with the kit's deployer, and reads the live pod
// the oracle is computed from and the workload's settings onto the timeline.
func (s *scenarioRun) deploy(ctx context.Context, slot int) error {
	s.phase = "deploy"
	s.mark(reports.MarkDeploy, "")
	ns := s.rep.Namespace
	target, err := s.r.kit.deployer.Install(ctx, s.r.Conn, deploy.Request{
		Namespace: ns, Variant: s.variant, Replicas: s.sc.Target.Replicas,
		Bootstrap: s.sc.Target.Bootstrap, Slot: slot, Patch: s.r.Opts.Patch,
		// An existing cluster driven by in-cluster load is used as a remote one: nothing through
		// 127.0.0.1 (its NodePorts need not be published there).
		NoLoopback: s.r.kc == nil && s.r.Opts.LoadAgents > 0,
	})
	if err != nil {
		return fmt.Errorf("deploy target into %s: %w", ns, err)
	}
	if target.Cleanup != nil {
		s.onEnd(func() {
			cctx, cancel := interrupt.Teardown(ctx, 30*time.Second)
			defer cancel()
			if err := target.Cleanup(cctx); err != nil {
				s.log.Warn("clean up target", "err", err)
			}
		})
	}
	s.target = target
	if s.rep.Target == "" {
		s.rep.Target = target.Description
	}
	if len(s.r.Opts.Patch) > 0 {
		s.rep.Target += patchedSuffix
	}
	if s.pod, err = s.r.livePod(ctx, target); err != nil {
		return err
	}
	if list, lerr := s.r.Conn.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); lerr != nil {
		s.log.Warn("list the cluster's nodes", "err", lerr)
	} else {
		s.nodes = list.Items
	}
	if e, werr := workloadEntry(target, s.pod, s.nodes); werr != nil {
		s.log.Warn("record the workload's settings", "err", werr)
	} else {
		s.availability(ctx, target, e.Workload)
		s.tl.Append(e)
	}
	return nil
}

// availability adds to w the workload's replicas and what its rolling update may take out of
// service at once, as the controller's spec says (left unknown when it cannot be read).
func (s *scenarioRun) availability(ctx context.Context, t *deploy.Target, w *timeline.WorkloadSpec) {
	replicas, unavailable, ok, err := faults.Availability(ctx, faults.Env{Client: s.r.Conn.Client, Namespace: t.Namespace,
		Deployment: t.Deployment, WorkloadKind: t.WorkloadKind, WorkloadName: t.WorkloadName})
	if err != nil {
		s.log.Warn("read the workload's rollout settings", "err", err)
	}
	if !ok || err != nil {
		return
	}
	r, u := int(replicas), int(unavailable)
	w.Replicas, w.RolloutUnavailable = &r, &u
}

// observe starts the watchers writing to the timeline, the front door's record of the requests
// (a door that keeps one: frontdoor.go) or else conntrack attribution of them, and the watch of
// kube-proxy's routing. path is the load's, which the door must serve before the load starts.
func (s *scenarioRun) observe(ctx context.Context, path string) error {
	s.phase = "observers"
	obs, err := s.r.kit.observers.Start(ctx, s.r.Conn, s.target, s.tl)
	if err != nil {
		return fmt.Errorf("start observers in %s: %w", s.rep.Namespace, err)
	}
	s.obs = obs
	s.onEnd(obs.Stop)
	s.mark(reports.MarkObserversSynced, "")
	if s.door, err = s.r.openDoor(ctx, s.target, path, s.log); err != nil { // a front door's record: frontdoor.go
		return err
	}
	s.onEnd(s.door.stop)
	if s.door == nil {
		s.attr = s.r.startAttribution(ctx, s.target, s.log) // conntrack attribution: attribution.go
		s.onEnd(s.attr.stop)
	}
	s.routes = s.r.startRouting(ctx, s.target, s.nodes, s.log) // kube-proxy's routing: routing.go
	s.onEnd(s.routes.stop)
	host := s.r.startHostCPU(ctx, s.tl, s.log)
	s.onEnd(host.Stop)
	return nil
}

// nodeAccess gives the faults that act on a pod's node (freeze) a way to its processes: the kind
// node containers on the local cluster, else probegate's node agent, a DaemonSet started here in
// the scenario's namespace, ready on every node before the first fault, and removed when Run
// returns (after the faults' revert, which may need it).
func (s *scenarioRun) nodeAccess(ctx context.Context) error {
	r := s.r
	switch {
	case !needsNodeAccess(s.sc):
		return nil
	case r.kit.nodeExecOn != nil:
		s.nodeProcs = faults.ExecProcs(r.kit.nodeExecOn)
		s.pauseNode = r.kit.pauseNode
		return nil
	}
	s.phase = "node-agent"
	s.mark("node-agent", fmt.Sprintf("starting DaemonSet %s (%s) on every node", nodeAgentName, r.nodeAgentImage()))
	log := s.log
	agents := nodeAgents{
		client: r.Conn.Client, ns: s.rep.Namespace, image: r.nodeAgentImage(), log: log,
		timeout: nodeAgentReadyTimeout, poll: 500 * time.Millisecond,
		progress: func(ready, want int) {
			s.status.set(fmt.Sprintf("node-agent %d/%d ready", ready, want))
			log.Info("waiting for the node agent", "ready", ready, "nodes", want)
		},
	}
	s.onEnd(func() {
		cctx, cancel := interrupt.Teardown(ctx, 30*time.Second)
		defer cancel()
		agents.remove(cctx)
	})
	procs, err := agents.start(ctx)
	if err != nil {
		return err
	}
	s.nodeProcs = procs
	s.pauseNode, s.pauseHow = procs.StopKubelet, "SIGSTOP to its kubelet through the node agent: the control plane loses the node, its pods keep running"
	s.mark("node-agent-ready", describeAgents(procs))
	return nil
}

// planFaults builds every fault's instance (or its skip reason) with its own seeded stream. From
// here the faults are reverted whatever happens: schedule end, error, Ctrl-C or panic.
func (s *scenarioRun) planFaults(ctx context.Context) error {
	for _, size := range []func(*scenario.Scenario, *corev1.Pod) (*scenario.Scenario, []string){sizeToTarget, coverSpans, coverRecovery} {
		if sized, notes := size(s.sc, s.pod); len(notes) > 0 {
			s.sc = sized
			for _, n := range notes {
				s.log.Info("sized to the target", "change", n)
			}
			s.mark("sized", strings.Join(notes, "; "))
		}
	}
	if covered, minLoad, notes := coverRolloutBound(s.sc, s.pod); len(notes) > 0 {
		s.sc = covered
		s.rolloutEnd = &rolloutEnd{min: minLoad, margin: scenario.SizingMargin}
		for _, n := range notes {
			s.log.Info("sized to the target", "change", n)
		}
		s.mark("sized", strings.Join(notes, "; "))
	}
	sc, r := s.sc, s.r
	var build faultBuilder = faultRegistry{}
	if r.kit.faults != nil {
		build = r.kit.faults
	}
	root := seed.New(uint64(s.seed))
	// Counted only for a node fault: every other scenario is spared the API call.
	nodes := 0
	if slices.ContainsFunc(sc.Faults, func(f scenario.Fault) bool { return faults.Needs(f.Type, faults.NeedsNodes) }) {
		var err error
		if nodes, err = cluster.SchedulableNodes(ctx, r.Conn.Client); err != nil {
			return err
		}
	}
	var planned []*plannedFault
	resolved := *sc // this run's scenario with its holds resolved: what the judge compares with the timeline
	resolved.Faults = slices.Clone(sc.Faults)
	for i, f := range sc.Faults {
		if f.Until != "" {
			var why string
			var load time.Duration
			if f, load, why = holdUntil(&resolved, f, s.pod); why != "" {
				planned = append(planned, &plannedFault{Index: i, Spec: f, Skip: why}) // the schedule records and logs the skip
				continue
			}
			resolved.Faults[i] = f
			s.log.Info("fault held until the target's own timing", "fault", fmt.Sprintf("faults[%d] %s", i, f.Type), "until", f.Until, "for", f.Duration)
			if load != resolved.Load.Duration {
				note := fmt.Sprintf("load %s → %s: faults[%d] %s is held %s, until the target's readiness has withdrawn the pod at worst", resolved.Load.Duration, load, i, f.Type, f.Duration)
				s.log.Info("sized to the target", "change", note)
				s.mark("sized", note)
				resolved.Load.Duration = load
			}
		}
		env := faultEnv{
			Index: i, Conn: r.Conn, Target: s.target, Timeline: s.tl,
			Rand:      root.Fork("faults/" + strconv.Itoa(i) + "/" + f.Type),
			NodeProcs: s.nodeProcs, PauseNode: s.pauseNode, PauseHow: s.pauseHow, SchedulableNodes: nodes,
		}
		inj, skip, err := build.Build(f, env)
		if err != nil {
			return fmt.Errorf("%s: faults[%d] (%s): %w", sc.File, i, f.Type, err)
		}
		planned = append(planned, &plannedFault{Index: i, Spec: f, Inj: inj, Skip: skip})
	}
	s.sc = &resolved
	if s.rolloutEnd != nil {
		for _, f := range resolved.Faults {
			s.rolloutEnd.lastFault = max(s.rolloutEnd.lastFault, f.End())
		}
	}
	s.sched = newSchedule(planned, s.tl, s.log)
	// RevertAll uses its own bounded context: ctx may be the cancelled one.
	s.onEnd(func() {
		if err := s.sched.RevertAll(ctx); err != nil {
			s.log.Error("revert faults", "err", err)
			s.teardownErr = errors.Join(s.teardownErr, err)
		}
	})
	return nil
}

// drive runs the load on path and the fault schedule from the same instant until the load ends,
// and keeps every request, attributed to pods.
func (s *scenarioRun) drive(ctx context.Context, path string) error {
	s.phase = "load"
	load, start, err := s.startLoad(ctx, path)
	if err != nil {
		return err
	}
	waitSchedule, stopSchedule := s.startSchedule(ctx, start)
	defer stopSchedule()
	loadDone := make(chan struct{})
	if s.rolloutEnd != nil {
		go s.endAfterRollouts(ctx, *s.rolloutEnd, load, start, loadDone)
	}
	reqs, loadErr := waitLoad(ctx, load)
	close(loadDone)
	reqs = timeline.KeyHeaderPods(reqs, s.tl.Entries())
	reqs, s.rep.Attribution = s.attr.apply(reqs, s.tl.Entries())
	reqs, s.rep.Attribution = s.door.apply(ctx, reqs, s.tl.Entries(), s.rep.Attribution)
	s.routes.record(s.tl)
	s.rep.Requests, s.reqs = reqs, reqs
	if c, ok := load.(connectionRun); ok {
		s.rep.Connections = reports.PinConnections(c.Connections(), reqs)
	}
	if err := waitSchedule(); err != nil {
		load.Stop()
		return err
	}
	if loadErr != nil {
		return fmt.Errorf("load: %w", loadErr)
	}
	return nil
}

// startLoad starts the scenario's load on path, hands it to the faults that act on it (overload)
// and to the progress line, and returns it with the instant it started.
func (s *scenarioRun) startLoad(ctx context.Context, path string) (loadRun, time.Time, error) {
	sc, r := s.sc, s.r
	s.mark(reports.MarkLoadStart, fmt.Sprintf("%d rps for %s", sc.Load.Rate, sc.Load.Duration))
	load, err := r.kit.load.Start(ctx, s.door.loadSpec(s.attr.loadSpec(loadSpec{
		URL: s.target.URL + path, Namespace: s.target.Namespace, Service: s.target.Service, Path: path,
		Protocol: protocolOf(r.Opts.Custom), GRPC: grpcCall(r.Opts.Custom),
		Rate: sc.Load.Rate, Duration: sc.Load.Duration,
		KeepAlive: sc.Load.KeepAlive, Timeout: sc.Load.Timeout, Clients: sc.Load.Clients, PodHeader: podHeader(r.Opts.Custom),
		// A user's app names its pod only in the header its target file gives, if any.
		IgnorePodHeader: r.Opts.Custom != nil && r.Opts.Custom.PodHeader == "",
	})), s.tl)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("start load: %w", err)
	}
	// The schedule counts from the moment the load runs: in-cluster load first starts its agents.
	startAt, start := s.tl.Now()
	s.loadStart = start
	setLoad(s.sched, tallied(load, s.attr, s.tl))
	s.status.watch(s.obs, s.sched, startAt, sc.Load.Duration)
	return load, startAt, nil
}

// startSchedule runs the fault schedule with its offsets counted from start. wait, called once the
// load has ended, stops the schedule and returns its error; stop ends it early (deferred). An
// interrupt reverts the faults at once, while the load drains its requests in flight (up to the
// request timeout), once the schedule has returned (an inject under way completes first); wait
// then names the faults it interrupted in the phase.
func (s *scenarioRun) startSchedule(ctx context.Context, start time.Time) (wait func() error, stop func()) {
	schedDone := make(chan error, 1)
	schedCtx, cancelSched := context.WithCancelCause(ctx)
	stopSched := func() { cancelSched(errLoadEnded) }
	go func() { schedDone <- s.sched.Run(schedCtx, start) }()
	type stopped struct {
		active              []string
		schedErr, revertErr error
	}
	early := make(chan stopped, 1)
	notInterrupted := context.AfterFunc(ctx, func() {
		active := s.sched.Active() // what the signal interrupted, before the schedule's own exit reverts it
		st := stopped{schedErr: <-schedDone}
		st.active = append(active, s.sched.Active()...)
		slices.Sort(st.active)
		st.active = slices.Compact(st.active)
		st.revertErr = s.sched.RevertAll(ctx)
		early <- st
	})
	wait = func() error {
		if notInterrupted() {
			stopSched()
			return <-schedDone
		}
		st := <-early
		if len(st.active) > 0 {
			s.phase = "load with " + strings.Join(st.active, ", ") + " injected"
		}
		if st.revertErr != nil {
			s.log.Error("revert faults", "err", st.revertErr)
			s.teardownErr = errors.Join(s.teardownErr, st.revertErr)
		}
		return st.schedErr
	}
	return wait, stopSched
}

// endSchedule reverts every fault still injected and marks the schedule's end. It returns false
// when a fault could not be reverted (teardownErr says which): nothing may then be judged.
func (s *scenarioRun) endSchedule(ctx context.Context) bool {
	if err := s.sched.RevertAll(ctx); err != nil {
		s.log.Error("revert faults", "err", err)
		s.teardownErr = errors.Join(s.teardownErr, err)
		return false
	}
	s.loadEnd = s.tl.Since(time.Now())
	s.mark("schedule-end", fmt.Sprintf("%d requests", len(s.reqs)))
	return true
}

// settle waits the scenario's settle time, for recovery and late events, then stops the watchers.
func (s *scenarioRun) settle(ctx context.Context) error {
	s.phase = "settle"
	s.mark("settle", s.sc.Settle.String())
	if err := pause.For(ctx, s.sc.Settle); err != nil {
		return err
	}
	s.recordProbeLatency(ctx)
	s.obs.Stop()
	s.mark("end", "")
	return nil
}

// judge computes the oracle from the live pod and evaluates the scenario's verdicts over the
// recorded timeline and requests, into the report.
func (s *scenarioRun) judge(ctx context.Context) error {
	s.phase = "judge"
	s.status.set("judge")
	in := judgeInput{Scenario: s.sc, Entries: s.tl.Entries(), Requests: s.reqs, Pod: s.pod, LoadStart: s.loadStart, LoadEnd: s.loadEnd}
	o, results, err := awaitJudge(ctx, s.r.kit.judge, in)
	if err != nil {
		return err
	}
	s.rep.Oracle = o
	s.rep.Verdicts = results
	for _, res := range results {
		s.log.Info("verdict", "rule", res.Rule, "status", res.Status, "observed", res.Observed)
	}
	if ctx.Err() == nil {
		s.phase = "done"
	}
	return nil
}
