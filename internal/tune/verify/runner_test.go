package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// patchExecutor stands in for the runner: it records each re-run's patch and passes every rule
// when the patch adds a startup probe, failing them all otherwise (the fixture's no-startup-probe,
// as far as a fake can be), and writes the report directory as the runner does.
type patchExecutor struct {
	patches []string
}

func (e *patchExecutor) execute(_ context.Context, patch []byte, scs []*scenario.Scenario, dir string, command []string) (*reports.Report, error) {
	e.patches = append(e.patches, string(patch))
	st := verdict.Fail
	if strings.Contains(string(patch), "startupProbe") {
		st = verdict.Pass
	}
	rep := &reports.Report{Command: command}
	for _, sc := range scs {
		s := reports.ScenarioReport{Name: sc.Name, Seed: sc.Seed, Variant: sc.Target.Variant}
		for _, e := range sc.Expect {
			s.Verdicts = append(s.Verdicts, verdict.Result{Rule: e.Rule, Status: st})
		}
		rep.Scenarios = append(rep.Scenarios, s)
	}
	return rep, reports.WriteAll(dir, rep)
}

// TestRunnerRerunnerRerunsEachWorkloadWithItsPatch: each workload's scenarios are re-run with its
// patch, into a report directory of its own that also keeps the patch (the runner's part, the
// patch reaching the install, is runner's TestRunInstallsWithThePatchAndSaysSo).
func TestRunnerRerunnerRerunsEachWorkloadWithItsPatch(t *testing.T) {
	p := plan(t, noStartupProbeColdStart(t), shortGracePodDelete(t))
	exec := &patchExecutor{}
	out := t.TempDir()
	rr := &RunnerRerunner{Execute: exec.execute, Out: out, Command: []string{"probegate", "tune", "--verify"}}
	if err := Run(context.Background(), p, rr); err != nil {
		t.Fatal(err)
	}
	if len(exec.patches) != 2 {
		t.Fatalf("%d re-runs, want 2 (cold-start and pod-delete-under-load)", len(exec.patches))
	}
	for _, patch := range exec.patches {
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
	if len(rr.Dirs) != 2 {
		t.Fatalf("dirs %v: want a directory per workload", rr.Dirs)
	}
	rep, err := reports.LoadDir(filepath.Join(out, "deployment-target-no-startup-probe"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scenarios) != 1 || rep.Scenarios[0].Name != "cold-start" || rep.Scenarios[0].Seed != 105 {
		t.Errorf("after report %+v", rep.Scenarios)
	}
	if _, err := os.Stat(filepath.Join(out, "deployment-target-short-grace", reports.ReportFile)); err != nil {
		t.Error(err)
	}
	if saved, err := os.ReadFile(filepath.Join(out, "deployment-target-short-grace", PatchFile)); err != nil || !strings.Contains(string(saved), "terminationGracePeriodSeconds") {
		t.Errorf("saved patch %q, %v", saved, err)
	}
}
