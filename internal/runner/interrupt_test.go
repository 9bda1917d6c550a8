package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/interrupt"
	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// ctrlC returns a context that send interrupts like a user at a terminal: the first SIGINT cancels
// it, the second hurries the teardown.
func ctrlC(t *testing.T) (context.Context, func(syscall.Signal)) {
	t.Helper()
	ch := make(chan os.Signal, 4)
	ctx, stop := interrupt.Watch(context.Background(), ch, nil)
	t.Cleanup(stop)
	return ctx, func(s syscall.Signal) { ch <- s }
}

// ctxFaults builds ctxInjectors: they say when they are injected and record the context each
// revert was given.
type ctxFaults struct {
	injected chan string
	mu       sync.Mutex
	reverts  []revertCall
}

type revertCall struct {
	at          time.Time
	fault       string
	err         error // the context's error when Revert was called
	hasDeadline bool
}

func newCtxFaults() *ctxFaults { return &ctxFaults{injected: make(chan string, 8)} }

func (f *ctxFaults) Build(spec scenario.Fault, env faultEnv) (faults.Fault, string, error) {
	return &ctxInjector{name: spec.Type, owner: f, tl: env.Timeline}, "", nil
}

func (f *ctxFaults) calls() []revertCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]revertCall(nil), f.reverts...)
}

func (f *ctxFaults) revertedAt() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reverts[0].at
}

type ctxInjector struct {
	name  string
	owner *ctxFaults
	tl    *timeline.Timeline
}

func (c *ctxInjector) Type() string { return c.name }

func (c *ctxInjector) Inject(context.Context) error {
	c.tl.Append(timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: c.name, Action: timeline.FaultInject}})
	c.owner.injected <- c.name
	return nil
}

func (c *ctxInjector) Revert(ctx context.Context) error {
	_, dl := ctx.Deadline()
	c.owner.mu.Lock()
	c.owner.reverts = append(c.owner.reverts, revertCall{at: time.Now(), fault: c.name, err: ctx.Err(), hasDeadline: dl})
	c.owner.mu.Unlock()
	c.tl.Append(timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: c.name, Action: timeline.FaultRevert}})
	return nil
}

// longFault is a scenario whose load runs 10 s with db-latency injected at once for 9 s.
func longFault(name string) *scenario.Scenario {
	sc := testScenario(name)
	sc.Load.Duration = 10 * time.Second
	sc.Faults = []scenario.Fault{{Type: "db-latency", At: 10 * time.Millisecond, Duration: 9 * time.Second}}
	return sc
}

func waitInjected(t *testing.T, f *ctxFaults) {
	t.Helper()
	select {
	case <-f.injected:
	case <-time.After(5 * time.Second):
		t.Fatal("the fault was never injected")
	}
}

func namespaceGone(t *testing.T, r *Runner, ns string) {
	t.Helper()
	_, err := r.Conn.Client.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s not deleted (get: %v)", ns, err)
	}
}

// Ctrl-C while a fault is injected: the run stops at once, the fault is reverted with a live,
// bounded context (not the cancelled run context), the namespace is deleted, nothing is judged,
// and the report names the signal and the phase.
func TestRunCtrlCMidFaultRevertsWithFreshContext(t *testing.T) {
	r, _, _, _ := newTestRunner(t)
	f := newCtxFaults()
	r.kit.faults = f
	ctx, send := ctrlC(t)
	go func() {
		<-f.injected
		send(syscall.SIGINT)
	}()
	start := time.Now()
	rep, err := r.Run(ctx, longFault("db-slowness"), 0)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("run went on %s after Ctrl-C", took)
	}
	const want = "interrupted by SIGINT at load with db-latency injected"
	if err == nil || err.Error() != want || rep.Error != want {
		t.Fatalf("err = %v, report error %q; want %q", err, rep.Error, want)
	}
	if s := interrupt.From(ctx); s == nil || !errors.Is(err, s) {
		t.Errorf("the error does not wrap the signal: %v", err)
	}
	calls := f.calls()
	if len(calls) != 1 || calls[0].err != nil || !calls[0].hasDeadline {
		t.Fatalf("reverts = %+v, want one with a live, bounded context", calls)
	}
	if rep.Status() == verdict.Pass || len(rep.Verdicts) != 0 {
		t.Errorf("interrupted scenario judged: status %s, verdicts %+v", rep.Status(), rep.Verdicts)
	}
	if len(rep.Requests) == 0 {
		t.Errorf("the requests recorded before Ctrl-C were dropped")
	}
	namespaceGone(t, r, rep.Namespace)
}

// --keep leaves the namespace of an interrupted scenario for inspection; its faults are reverted.
func TestRunCtrlCKeepLeavesNamespace(t *testing.T) {
	r, _, _, _ := newTestRunner(t)
	r.Opts.Keep = true
	f := newCtxFaults()
	r.kit.faults = f
	ctx, send := ctrlC(t)
	go func() {
		<-f.injected
		send(syscall.SIGTERM)
	}()
	rep, err := r.Run(ctx, longFault("db-slowness"), 0)
	if err == nil || !strings.HasPrefix(err.Error(), "interrupted by SIGTERM at load") {
		t.Fatalf("err = %v", err)
	}
	if len(f.calls()) != 1 {
		t.Fatalf("reverts = %+v", f.calls())
	}
	if _, err := r.Conn.Client.CoreV1().Namespaces().Get(context.Background(), rep.Namespace, metav1.GetOptions{}); err != nil {
		t.Fatalf("--keep namespace gone: %v", err)
	}
}

// blockingDeployer waits in Install until the run is cancelled, like a rollout that is not ready.
type blockingDeployer struct{ started chan struct{} }

func (d *blockingDeployer) Preflight(context.Context, *cluster.Conn, []string) error { return nil }

func (d *blockingDeployer) Install(ctx context.Context, _ *cluster.Conn, req deploy.Request) (*deploy.Target, error) {
	close(d.started)
	<-ctx.Done()
	return nil, errors.New("wait for deployment " + req.Namespace + "/target: " + ctx.Err().Error())
}

func TestRunCtrlCWhileDeploying(t *testing.T) {
	r, j, _, _ := newTestRunner(t)
	d := &blockingDeployer{started: make(chan struct{})}
	r.kit.deployer = d
	ctx, send := ctrlC(t)
	go func() {
		<-d.started
		send(syscall.SIGINT)
	}()
	rep, err := r.Run(ctx, testScenario("cold-start"), 0)
	if err == nil || err.Error() != "interrupted by SIGINT at deploy" {
		t.Fatalf("err = %v", err)
	}
	if j.String() != "" {
		t.Errorf("faults touched: %s", j.String())
	}
	namespaceGone(t, r, rep.Namespace)
}

// blockingJudge judges only when released, and says when it has started.
type blockingJudge struct {
	started chan struct{}
	release chan struct{}
}

func (b *blockingJudge) Judge(in judgeInput) (*oracle.Oracle, []verdict.Result, error) {
	close(b.started)
	<-b.release
	return fakeJudge{}.Judge(in)
}

// The first Ctrl-C while judging lets the judging finish (it is bounded) but the scenario is still
// reported as interrupted, never as passed.
func TestRunCtrlCWhileJudgingStillMarksInterrupted(t *testing.T) {
	r, _, _, _ := newTestRunner(t)
	judge := &blockingJudge{started: make(chan struct{}), release: make(chan struct{})}
	r.kit.judge = judge
	sc := testScenario("db-slowness")
	sc.Expect = sc.Expect[:1] // one passing rule
	ctx, send := ctrlC(t)
	done := make(chan struct{})
	var rep *reports.ScenarioReport
	var err error
	go func() {
		defer close(done)
		rep, err = r.Run(ctx, sc, 0)
	}()
	<-judge.started
	send(syscall.SIGINT)
	<-ctx.Done()
	select {
	case <-done:
		t.Fatal("the first Ctrl-C abandoned judging")
	case <-time.After(100 * time.Millisecond):
	}
	close(judge.release)
	<-done
	if err == nil || err.Error() != "interrupted by SIGINT at judge" {
		t.Fatalf("err = %v", err)
	}
	if len(rep.Verdicts) != 1 || rep.Status() == verdict.Pass {
		t.Errorf("verdicts %+v, status %s", rep.Verdicts, rep.Status())
	}
}

// A second Ctrl-C stops waiting for the judge.
func TestRunSecondCtrlCSkipsJudging(t *testing.T) {
	r, _, _, _ := newTestRunner(t)
	judge := &blockingJudge{started: make(chan struct{}), release: make(chan struct{})}
	defer close(judge.release)
	r.kit.judge = judge
	ctx, send := ctrlC(t)
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, testScenario("db-slowness"), 0)
		done <- err
	}()
	<-judge.started
	send(syscall.SIGINT)
	send(syscall.SIGINT)
	select {
	case err := <-done:
		if err == nil || err.Error() != "interrupted by SIGINT at judge" {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second Ctrl-C did not stop the wait for judging")
	}
}

// Execute writes what was recorded when the run is interrupted: the scenario cut short with its
// timeline (streamed while it ran) and requests, the one never started as not run, and the
// report marked interrupted, so its exit code is never a pass.
func TestExecuteCtrlCWritesInterruptedReport(t *testing.T) {
	r, _, _, _ := newTestRunner(t)
	f := newCtxFaults()
	r.kit.faults = f
	first, second := longFault("db-slowness"), testScenario("cold-start")
	first.Parallel, second.Parallel = false, false
	out := t.TempDir()
	streamed := filepath.Join(out, "scenarios", "db-slowness-good", reports.TimelineFile)
	ctx, send := ctrlC(t)
	var during []byte
	go func() {
		<-f.injected
		during, _ = os.ReadFile(streamed) // read while the scenario runs
		send(syscall.SIGINT)
	}()
	rep, err := r.Execute(ctx, []*scenario.Scenario{first, second}, out, []string{"probegate", "run"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(during), `"action":"inject"`) {
		t.Errorf("timeline.jsonl while running holds no inject entry:\n%s", during)
	}
	if rep.Interrupted != "SIGINT" || rep.ExitCode() == reports.ExitPass {
		t.Errorf("interrupted %q, exit code %d", rep.Interrupted, rep.ExitCode())
	}
	back, err := reports.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if back.Interrupted != "SIGINT" {
		t.Errorf("report.json interrupted = %q", back.Interrupted)
	}
	s0, s1 := back.Scenarios[0], back.Scenarios[1]
	if !strings.HasPrefix(s0.Error, "interrupted by SIGINT at load") || s0.Timeline == nil || len(s0.Requests) == 0 {
		t.Errorf("cut-short scenario: error %q, timeline %v, %d requests", s0.Error, s0.Timeline != nil, len(s0.Requests))
	}
	if s0.TimelinePath != "scenarios/db-slowness-good/timeline.jsonl" {
		t.Errorf("timeline path %q", s0.TimelinePath)
	}
	var actions []string
	for _, e := range s0.Timeline.Filter(timeline.KindFault) {
		actions = append(actions, e.Fault.Action)
	}
	if strings.Join(actions, ",") != "inject,revert" {
		t.Errorf("fault actions in the written timeline: %v", actions)
	}
	if s1.Error != "not run: interrupted by SIGINT" {
		t.Errorf("scenario never started: error %q", s1.Error)
	}
	for _, name := range []string{reports.JUnitFile, reports.HTMLFile} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
}

// drainingLoad takes drain to finish its requests in flight once stopped, like vegeta waiting for
// slow responses.
type drainingLoad struct{ drain time.Duration }

func (l *drainingLoad) Start(ctx context.Context, spec loadSpec, tl *timeline.Timeline) (loadRun, error) {
	run, err := fakeLoad{}.Start(ctx, spec, tl)
	return &drainingRun{loadRun: run, drain: l.drain}, err
}

type drainingRun struct {
	loadRun
	drain time.Duration
}

func (r *drainingRun) Wait() ([]timeline.Request, error) {
	reqs, err := r.loadRun.Wait()
	time.Sleep(r.drain)
	return reqs, err
}

// The faults are reverted as soon as the signal arrives, not after the load has drained.
func TestRunCtrlCRevertsBeforeTheLoadDrains(t *testing.T) {
	r, _, _, _ := newTestRunner(t)
	f := newCtxFaults()
	r.kit.faults = f
	r.kit.load = &drainingLoad{drain: 2 * time.Second}
	ctx, send := ctrlC(t)
	var signalled time.Time
	go func() {
		<-f.injected
		signalled = time.Now()
		send(syscall.SIGINT)
	}()
	if _, err := r.Run(ctx, longFault("db-slowness"), 0); err == nil {
		t.Fatal("no interruption error")
	}
	returned := time.Now()
	calls := f.calls()
	if len(calls) != 1 {
		t.Fatalf("reverts = %+v", calls)
	}
	if took := returned.Sub(signalled); took < 2*time.Second {
		t.Fatalf("run returned %s after the signal, before its load drained", took)
	}
	revertedAt := f.revertedAt()
	if took := revertedAt.Sub(signalled); took > time.Second {
		t.Errorf("fault reverted %s after the signal: it waited for the load to drain", took)
	}
}
