package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

type fakeDeployer struct {
	err      error
	mu       sync.Mutex
	requests []deploy.Request
}

func (d *fakeDeployer) Preflight(context.Context, *cluster.Conn, []string) error { return nil }

func (d *fakeDeployer) Install(ctx context.Context, c *cluster.Conn, req deploy.Request) (*deploy.Target, error) {
	d.mu.Lock()
	d.requests = append(d.requests, req)
	d.mu.Unlock()
	if d.err != nil {
		return nil, d.err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "target-0", Namespace: req.Namespace, Labels: map[string]string{"app": "target"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "target"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if _, err := c.Client.CoreV1().Pods(req.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	return &deploy.Target{Namespace: req.Namespace, Deployment: "target", Service: "target", Selector: "app=target",
		URL: fmt.Sprintf("http://127.0.0.1:%d", 18080+req.Slot), Description: "fixture " + req.Variant}, nil
}

type fakeObservers struct{ stopped atomic.Int32 }

func (o *fakeObservers) Start(ctx context.Context, c *cluster.Conn, t *deploy.Target, tl *timeline.Timeline) (observation, error) {
	return o, nil
}
func (o *fakeObservers) ReadyEndpoints() int { return 3 }
func (o *fakeObservers) Stop()               { o.stopped.Add(1) }

// fakeLoad starts one fakeLoadRun per scenario: runs side by side share nothing.
type fakeLoad struct{}

func (fakeLoad) Start(ctx context.Context, spec loadSpec, tl *timeline.Timeline) (loadRun, error) {
	return &fakeLoadRun{spec: spec, tl: tl, stop: make(chan struct{})}, nil
}

// fakeLoadRun lasts its spec's duration (or until stopped) and records one request.
type fakeLoadRun struct {
	spec loadSpec
	tl   *timeline.Timeline
	stop chan struct{}
	once sync.Once
}

func (l *fakeLoadRun) SetRate(r float64) float64 { return 0 }
func (l *fakeLoadRun) Stop()                     { l.once.Do(func() { close(l.stop) }) }
func (l *fakeLoadRun) Wait() ([]timeline.Request, error) {
	t := time.NewTimer(l.spec.Duration)
	defer t.Stop()
	select {
	case <-t.C:
	case <-l.stop:
	}
	_, off := l.tl.Now()
	return []timeline.Request{{Seq: 1, T: off, Status: 200}}, nil
}

type fakeFaults struct {
	j    *journal
	tl   atomic.Pointer[timeline.Timeline]
	skip map[string]string
}

func (f *fakeFaults) Build(spec scenario.Fault, env faultEnv) (faults.Fault, string, error) {
	if why, ok := f.skip[spec.Type]; ok {
		return nil, why, nil
	}
	if env.Rand == nil || env.Target == nil || env.Timeline == nil {
		return nil, "", errors.New("incomplete fault env")
	}
	return &recordingInjector{name: spec.Type, j: f.j, tl: env.Timeline}, "", nil
}

// recordingInjector writes FaultAction entries like the real injectors, and journals calls.
type recordingInjector struct {
	name string
	j    *journal
	tl   *timeline.Timeline
}

func (r *recordingInjector) Type() string { return r.name }

func (r *recordingInjector) Inject(context.Context) error {
	r.j.add("+" + r.name)
	r.tl.Append(timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: r.name, Action: timeline.FaultInject}})
	return nil
}
func (r *recordingInjector) Revert(context.Context) error {
	r.j.add("-" + r.name)
	r.tl.Append(timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: r.name, Action: timeline.FaultRevert}})
	return nil
}

// fakeJudge fails rules named "fail-*" and checks it sees the fault actions on the timeline.
type fakeJudge struct{}

func (fakeJudge) Judge(in judgeInput) (*oracle.Oracle, []verdict.Result, error) {
	if in.Pod == nil {
		return nil, nil, errors.New("no pod")
	}
	faults := 0
	for _, en := range in.Entries {
		if en.Fault != nil {
			faults++
		}
	}
	var out []verdict.Result
	for _, e := range in.Scenario.Expect {
		st := verdict.Pass
		if strings.HasPrefix(e.Rule, "fail") {
			st = verdict.Fail
		}
		out = append(out, verdict.Result{Rule: e.Rule, Status: st, Observed: fmt.Sprintf("%d fault entries, %d requests", faults, len(in.Requests))})
	}
	return &oracle.Oracle{Container: in.Pod.Spec.Containers[0].Name, Propagation: in.LoadEnd - in.LoadStart}, out, nil
}

func newTestRunner(t *testing.T) (*Runner, *journal, *fakeDeployer, *fakeObservers) {
	t.Helper()
	j := &journal{}
	d := &fakeDeployer{}
	o := &fakeObservers{}
	return &Runner{
		Conn: &cluster.Conn{Name: "fake", Client: fake.NewClientset()},
		kit: kit{deployer: d, observers: o, load: fakeLoad{}, faults: &fakeFaults{j: j, skip: map[string]string{"stall": "target has no admin endpoint"}},
			judge: fakeJudge{}},
		Opts: Options{Parallel: 1},
	}, j, d, o
}

func testScenario(name string) *scenario.Scenario {
	return &scenario.Scenario{
		Name: name, Seed: 3, Parallel: true, Settle: 10 * time.Millisecond,
		Target: scenario.Target{Variant: "good", Replicas: 3},
		Load:   scenario.Load{Rate: 10, Duration: 300 * time.Millisecond, KeepAlive: true, Path: "/work"},
		Faults: []scenario.Fault{
			{Type: "db-latency", At: 50 * time.Millisecond, Duration: 100 * time.Millisecond},
			{Type: "stall", At: 60 * time.Millisecond, Duration: 50 * time.Millisecond},
			{Type: "pod-delete", At: 200 * time.Millisecond},
		},
		Expect: []scenario.Expectation{{Rule: "ok-rule"}, {Rule: "fail-rule"}},
	}
}

func TestRunEndToEndWithFakes(t *testing.T) {
	r, j, d, o := newTestRunner(t)
	rep, err := r.Run(context.Background(), testScenario("db-slowness"), 2)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := j.String(), "+db-latency -db-latency +pod-delete -pod-delete"; got != want {
		t.Fatalf("fault calls %q, want %q", got, want)
	}
	if d.requests[0].Slot != 2 || d.requests[0].Variant != "good" || d.requests[0].Replicas != 3 {
		t.Errorf("install request = %+v", d.requests[0])
	}
	if !strings.HasPrefix(rep.Namespace, "pg-db-slowness-") {
		t.Errorf("namespace = %q", rep.Namespace)
	}
	if len(rep.Verdicts) != 2 || rep.Verdicts[0].Status != verdict.Pass || rep.Verdicts[1].Status != verdict.Fail {
		t.Fatalf("verdicts = %+v", rep.Verdicts)
	}
	// The judge saw 4 fault actions + the skip: every inject and revert happened before judging.
	if !strings.HasPrefix(rep.Verdicts[0].Observed, "5 fault entries, 1 requests") {
		t.Errorf("judge input = %s", rep.Verdicts[0].Observed)
	}
	if rep.Status() != verdict.Fail || rep.Error != "" {
		t.Errorf("status = %s error %q", rep.Status(), rep.Error)
	}
	var marks []string
	for _, e := range rep.Timeline.Filter(timeline.KindMark) {
		marks = append(marks, e.Mark.Name)
	}
	if got := strings.Join(marks, ","); got != "start,deploy,observers-synced,schedule-start,schedule-end,settle,end" {
		t.Errorf("marks = %s", got)
	}
	// The namespace is deleted afterwards.
	if _, err := r.Conn.Client.CoreV1().Namespaces().Get(context.Background(), rep.Namespace, metav1.GetOptions{}); err == nil {
		t.Errorf("namespace %s still exists", rep.Namespace)
	}
	if o.stopped.Load() == 0 {
		t.Errorf("observers never stopped")
	}
	if rep.Oracle == nil || rep.Oracle.Container != "target" || rep.Oracle.Propagation <= 0 {
		t.Errorf("oracle = %+v", rep.Oracle)
	}
}

func TestRunKeepLeavesNamespace(t *testing.T) {
	r, _, _, _ := newTestRunner(t)
	r.Opts.Keep = true
	rep, err := r.Run(context.Background(), testScenario("pod-delete-under-load"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Conn.Client.CoreV1().Namespaces().Get(context.Background(), rep.Namespace, metav1.GetOptions{}); err != nil {
		t.Fatalf("--keep namespace gone: %v", err)
	}
}

func TestRunCancelRevertsFaults(t *testing.T) {
	r, j, _, _ := newTestRunner(t)
	sc := testScenario("db-outage")
	sc.Load.Duration = 10 * time.Second
	sc.Faults = []scenario.Fault{{Type: "db-down", At: 20 * time.Millisecond, Duration: 9 * time.Second}}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel) // Ctrl-C mid-fault
	start := time.Now()
	rep, err := r.Run(ctx, sc, 0)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("cancel did not stop the run promptly")
	}
	if got := j.String(); got != "+db-down -db-down" {
		t.Fatalf("fault calls = %q", got)
	}
	if rep.Error == "" || rep.Status() != reports.StatusError {
		t.Errorf("report status %s error %q", rep.Status(), rep.Error)
	}
	if len(rep.Verdicts) != 0 {
		t.Errorf("verdicts judged on an interrupted run: %+v", rep.Verdicts)
	}
}

func TestRunDeployErrorInjectsNothing(t *testing.T) {
	r, j, d, _ := newTestRunner(t)
	d.err = errors.New("image probegate/target:dev not loaded")
	rep, err := r.Run(context.Background(), testScenario("cold-start"), 0)
	if err == nil || !strings.Contains(err.Error(), "image probegate/target:dev not loaded") {
		t.Fatalf("err = %v", err)
	}
	if j.String() != "" {
		t.Fatalf("faults touched after a failed deploy: %s", j.String())
	}
	if rep.Error == "" {
		t.Errorf("report has no error")
	}
}

func TestRunAllUsesSlotsAndRunsSerialAlone(t *testing.T) {
	r, _, d, _ := newTestRunner(t)
	r.Opts.Parallel, r.Opts.Slots = 3, 4
	var scs []*scenario.Scenario
	for i := 0; i < 5; i++ {
		sc := testScenario(fmt.Sprintf("s%d", i))
		sc.Faults = nil
		sc.Load.Duration = 100 * time.Millisecond
		scs = append(scs, sc)
	}
	scs[2].Parallel = false
	reps := r.RunAll(context.Background(), scs)
	for i, rep := range reps {
		if rep.Name != scs[i].Name || rep.Error != "" {
			t.Errorf("report %d = %s error %q", i, rep.Name, rep.Error)
		}
	}
	slots := map[int]bool{}
	for _, req := range d.requests {
		if req.Slot < 0 || req.Slot >= 3 {
			t.Errorf("slot %d outside --parallel 3", req.Slot)
		}
		slots[req.Slot] = true
	}
	if len(slots) < 2 {
		t.Errorf("parallel scenarios all used one slot: %v", slots)
	}
	// The serial scenario runs last, alone.
	if last := d.requests[len(d.requests)-1]; !strings.Contains(last.Namespace, "-s2-") {
		t.Errorf("serial scenario was not run after the parallel ones: %s", last.Namespace)
	}
}

// phases records what a run tells its Progress.
type phases struct {
	mu  sync.Mutex
	got []string
}

func (p *phases) Phase(scenario, phase string) { p.add(scenario + " " + phase) }
func (p *phases) Load(scenario string, _ time.Time, d time.Duration, ready func() int, active func() []string) {
	p.add(fmt.Sprintf("%s load %s ready %d", scenario, d, ready()))
	_ = active()
}
func (p *phases) Done(scenario string) { p.add(scenario + " done") }
func (p *phases) add(s string) {
	p.mu.Lock()
	p.got = append(p.got, s)
	p.mu.Unlock()
}

func TestRunTellsProgress(t *testing.T) {
	r, _, _, _ := newTestRunner(t)
	p := &phases{}
	r.Opts.Progress = p
	if _, err := r.Run(context.Background(), testScenario("db-slowness"), 0); err != nil {
		t.Fatal(err)
	}
	want := "db-slowness start,db-slowness start,db-slowness deploy,db-slowness observers-synced,db-slowness schedule-start," +
		"db-slowness load 300ms ready 3,db-slowness schedule-end,db-slowness settle,db-slowness end,db-slowness judge,db-slowness done"
	if got := strings.Join(p.got, ","); got != want {
		t.Fatalf("progress:\n got %s\nwant %s", got, want)
	}
}

func TestRunInstallsWithThePatchAndSaysSo(t *testing.T) {
	base, _, d, _ := newTestRunner(t)
	r := base.WithPatch([]byte("kind: Deployment\n"))
	reps := r.RunAll(context.Background(), []*scenario.Scenario{testScenario("a"), testScenario("b")})
	if base.Opts.Patch != nil {
		t.Errorf("WithPatch changed the runner it came from: patch %q", base.Opts.Patch)
	}
	if len(d.requests) != 2 {
		t.Fatalf("%d installs, want 2", len(d.requests))
	}
	for _, req := range d.requests {
		if string(req.Patch) != "kind: Deployment\n" {
			t.Errorf("install of %s without the patch: %q", req.Namespace, req.Patch)
		}
	}
	for _, rep := range reps {
		if rep.Error != "" || !strings.HasSuffix(rep.Target, patchedSuffix) {
			t.Errorf("report target %q (error %q): want it marked patched", rep.Target, rep.Error)
		}
	}
}
