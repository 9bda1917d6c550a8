package verify

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/runner"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// patchDeployer is a deploy.Deployer that records each install's patch and marks the pod it
// creates as patched, for patchJudge.
type patchDeployer struct {
	mu      sync.Mutex
	patches []string
}

func (d *patchDeployer) Preflight(context.Context, *cluster.Conn, []string) error { return nil }

func (d *patchDeployer) Install(ctx context.Context, c *cluster.Conn, req deploy.Request) (*deploy.Target, error) {
	d.mu.Lock()
	d.patches = append(d.patches, string(req.Patch))
	d.mu.Unlock()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "target-0", Namespace: req.Namespace, Labels: map[string]string{"app": "target"},
			Annotations: map[string]string{"patched": string(req.Patch)}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "target"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if _, err := c.Client.CoreV1().Pods(req.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	return &deploy.Target{Namespace: req.Namespace, Deployment: "target", Service: "target", Container: "target",
		Selector: "app=target", URL: "http://127.0.0.1:1", Description: "fixture " + req.Variant}, nil
}

type quietObservers struct{}

func (quietObservers) Start(context.Context, *cluster.Conn, *deploy.Target, *timeline.Timeline) (runner.Observation, error) {
	return quietObservers{}, nil
}
func (quietObservers) ReadyEndpoints() int { return 3 }
func (quietObservers) Stop()               {}

type instantLoad struct{}

func (instantLoad) Start(context.Context, runner.LoadSpec, *timeline.Timeline) (runner.LoadRun, error) {
	return instantLoad{}, nil
}
func (instantLoad) SetRate(float64) float64 { return 0 }
func (instantLoad) Stop()                   {}
func (instantLoad) Wait() ([]timeline.Request, error) {
	return []timeline.Request{{Seq: 1, Status: 200}}, nil
}

// patchJudge passes every rule on a pod installed with a patch that adds a startup probe, and
// fails them all otherwise: the fixture's no-startup-probe, as far as a fake can be.
type patchJudge struct{}

func (patchJudge) Judge(in runner.JudgeInput) (*oracle.Oracle, []verdict.Result, error) {
	st := verdict.Fail
	if strings.Contains(in.Pod.Annotations["patched"], "startupProbe") {
		st = verdict.Pass
	}
	var out []verdict.Result
	for _, e := range in.Scenario.Expect {
		out = append(out, verdict.Result{Rule: e.Rule, Status: st})
	}
	return &oracle.Oracle{Container: "target"}, out, nil
}

// TestRunnerRerunnerInstallsThePatchThroughTheRunner drives the real runner (its namespace,
// install, judge and report steps) with fake parts: the re-run installs no-startup-probe's patch,
// and the report directory it writes holds the re-run.
func TestRunnerRerunnerInstallsThePatchThroughTheRunner(t *testing.T) {
	p := plan(t, noStartupProbeColdStart(t), shortGracePodDelete(t))
	dep := &patchDeployer{}
	base := &runner.Runner{
		Conn: &cluster.Conn{Name: "fake", Client: fake.NewClientset()},
		Kit:  runner.Kit{Deployer: dep, Observers: quietObservers{}, Load: instantLoad{}, Judge: patchJudge{}},
		Opts: runner.Options{Parallel: 1, Slots: 1, Logger: slog.New(slog.DiscardHandler)},
	}
	out := t.TempDir()
	rr := &RunnerRerunner{Base: base, Out: out, Command: []string{"probegate", "tune", "--verify"}}
	if err := Run(context.Background(), p, rr); err != nil {
		t.Fatal(err)
	}
	if len(dep.patches) != 2 {
		t.Fatalf("%d installs, want 2 (cold-start and pod-delete-under-load)", len(dep.patches))
	}
	for _, patch := range dep.patches {
		if patch == "" || !strings.Contains(patch, "kind: Deployment") {
			t.Errorf("an install without tune's patch: %q", patch)
		}
	}
	if c := change(t, workload(t, p, "no-startup-probe"), "startupProbe"); c.Outcome != Fixed {
		t.Errorf("startup probe: %s (%s)", c.Outcome, c.Why)
	}
	if c := change(t, workload(t, p, "short-grace"), "terminationGracePeriodSeconds"); c.Outcome != NotFixed {
		t.Errorf("grace (the fake judge fails it): %s (%s)", c.Outcome, c.Why)
	}
	if p.ExitCode() != ExitFail {
		t.Errorf("exit %d, want 1", p.ExitCode())
	}
	if len(rr.Dirs) != 2 || base.Opts.Patch != nil {
		t.Fatalf("dirs %v, base patch %q: want a directory per workload and the base runner untouched", rr.Dirs, base.Opts.Patch)
	}
	rep, err := reports.LoadDir(filepath.Join(out, "deployment-target-no-startup-probe"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scenarios) != 1 || rep.Scenarios[0].Name != "cold-start" || rep.Scenarios[0].Seed != 105 ||
		!strings.HasSuffix(rep.Scenarios[0].Target, " + tune patch") {
		t.Errorf("after report %+v", rep.Scenarios)
	}
	if _, err := os.Stat(filepath.Join(out, "deployment-target-short-grace", reports.ReportFile)); err != nil {
		t.Error(err)
	}
	if saved, err := os.ReadFile(filepath.Join(out, "deployment-target-short-grace", PatchFile)); err != nil || !strings.Contains(string(saved), "terminationGracePeriodSeconds") {
		t.Errorf("saved patch %q, %v", saved, err)
	}
}
