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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/interrupt"
	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/loadgen/agent"
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
	// LoadAgents, when above 0, drives the load from that many agent pods inside the cluster
	// (image AgentImage, agent.DefaultImage when empty) instead of from this process. The node
	// agent (a cluster without local node containers) runs AgentImage too.
	LoadAgents int
	AgentImage string
	// DefaultSuite is set when nobody named the scenarios: one the cluster cannot host (too few
	// nodes) is then NOT APPLICABLE, listed with why, instead of INCONCLUSIVE.
	DefaultSuite bool
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

func (s runProgress) watch(obs observation, sched *schedule, start time.Time, d time.Duration) {
	if s.p != nil {
		s.p.Load(s.name, start, d, obs.ReadyEndpoints, sched.Active)
	}
}

func (s runProgress) done() {
	if s.p != nil {
		s.p.Done(s.name)
	}
}

// patchedSuffix ends the report's target name of a run whose workload was patched (Options.Patch).
const patchedSuffix = " + tune patch"

// Runner runs scenarios on one cluster.
type Runner struct {
	Conn *cluster.Conn
	Opts Options
	kit  kit
	// kc is the local kind cluster (images are loaded into it), nil on --kubeconfig runs.
	kc *cluster.Cluster

	poolOnce sync.Once
	pool     *slotPool

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
// the namespace and returns an error "interrupted by SIGINT at <phase>". The phases are
// scenarioRun's methods (phases.go).
func (r *Runner) Run(ctx context.Context, sc *scenario.Scenario, slot int) (rep *reports.ScenarioReport, err error) {
	s := r.newScenarioRun(sc)
	rep = s.rep
	defer s.status.done()
	defer func() { err = s.finish(ctx, recover(), err) }()
	defer s.undo()
	s.streamTimeline()
	s.mark("start", fmt.Sprintf("variant %s, seed %d, slot %d", s.variant, s.seed, slot))

	if why := notApplicable(sc, r.Opts.Custom); why != "" {
		s.notApplicable(why)
		return rep, nil
	}
	path, _ := loadPath(sc, r.Opts.Custom)
	cannot, err := r.lacksNodes(ctx, sc)
	if err != nil {
		return rep, err
	}
	if cannot != "" && r.Opts.DefaultSuite {
		s.notApplicable(cannot)
		return rep, nil
	}
	if cannot != "" {
		s.notRun(cannot)
		return rep, nil
	}
	if err := s.createNamespace(ctx); err != nil {
		return rep, err
	}
	if err := s.deploy(ctx, slot); err != nil {
		return rep, err
	}
	if err := s.observe(ctx, routePath(path, r.Opts.Custom)); err != nil {
		return rep, err
	}
	if err := s.nodeAccess(ctx); err != nil {
		return rep, err
	}
	if sized, err := s.sizeOverloads(ctx, path); err != nil {
		return rep, err
	} else if sized != nil {
		s.sc = sized
	}
	if err := s.planFaults(ctx); err != nil {
		return rep, err
	}
	if err := s.drive(ctx, path); err != nil {
		return rep, err
	}
	if !s.endSchedule(ctx) {
		// A fault left in place makes the verdicts untrustworthy: stop here. The report names the
		// failure (finish), interrupted or not.
		return rep, nil
	}
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}
	if err := s.settle(ctx); err != nil {
		return rep, err
	}
	if err := s.judge(ctx); err != nil {
		return rep, fmt.Errorf("judge: %w", err)
	}
	return rep, nil
}

// awaitJudge runs j. An interrupt while it runs lets it finish (judging is bounded); a second one
// (interrupt.Hurry) stops waiting for it.
func awaitJudge(ctx context.Context, j judger, in judgeInput) (*oracle.Oracle, []verdict.Result, error) {
	type judged struct {
		o       *oracle.Oracle
		results []verdict.Result
		err     error
	}
	done := make(chan judged, 1)
	go func() {
		var res judged
		defer func() {
			if p := recover(); p != nil {
				res = judged{err: fmt.Errorf("panicked: %v", p)}
			}
			done <- res
		}()
		res.o, res.results, res.err = j.Judge(in)
	}()
	select {
	case res := <-done:
		return res.o, res.results, res.err
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

// loadAware is implemented by faults that act on the running load (overload) or rank pods by it
// (a pod fault choosing the busiest pod).
type loadAware interface{ SetLoad(faults.RateSetter) }

func setLoad(s *schedule, l loadRun) {
	for _, f := range s.faults {
		if la, ok := f.Inj.(loadAware); ok {
			la.SetLoad(l)
		}
	}
}

// waitLoad waits for the load to end; on cancellation it stops the load and still collects what
// was recorded.
func waitLoad(ctx context.Context, l loadRun) ([]timeline.Request, error) {
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

// protocolOf is the protocol the target's load speaks ("" for the fixture: HTTP).
func protocolOf(custom *scenario.TargetSpec) string {
	if custom != nil {
		return custom.Protocol
	}
	return ""
}

// grpcCall is the call a gRPC target's load makes (nil for any other).
func grpcCall(custom *scenario.TargetSpec) *scenario.GRPCCall {
	if custom != nil {
		return custom.GRPC
	}
	return nil
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

// routePath is the path a front door must serve before the load starts: the target file's default
// request, which answers at once. A scenario's long request (requests.takes) is held for as long as
// it asks (20 s and more), longer than each check waits; its route was checked when the file was
// read.
func routePath(path string, custom *scenario.TargetSpec) string {
	if custom != nil && custom.Requests.Default != "" {
		return custom.Requests.Default
	}
	return path
}

// lacksNodes says why the cluster cannot take sc when it has fewer schedulable nodes than sc needs.
func (r *Runner) lacksNodes(ctx context.Context, sc *scenario.Scenario) (string, error) {
	if sc.Target.Nodes < 2 {
		return "", nil
	}
	n, err := cluster.SchedulableNodes(ctx, r.Conn.Client)
	if err != nil {
		return "", err
	}
	if n >= sc.Target.Nodes {
		return "", nil
	}
	return nodesMissing(sc, n), nil
}

// nodesMissing says that sc needs more schedulable nodes than the cluster's n.
func nodesMissing(sc *scenario.Scenario, n int) string {
	return fmt.Sprintf("%s needs %d schedulable nodes; the cluster has %d (a local cluster: probegate cluster create --workers 2)",
		sc.Name, sc.Target.Nodes, n)
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

// nodeAgentImage is the node agent's image: the in-cluster agents' (Options.AgentImage).
func (r *Runner) nodeAgentImage() string {
	if r.Opts.AgentImage != "" {
		return r.Opts.AgentImage
	}
	return agent.DefaultImage
}

func (r *Runner) logger() *slog.Logger {
	if r.Opts.Logger != nil {
		return r.Opts.Logger
	}
	return slog.Default()
}
