package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/probegate/probegate/internal/runner"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/reports"
)

// PatchFile is the applied patch, saved beside the re-runs' report.
const PatchFile = "tune-patch.yaml"

// Execute runs scenarios with the workload patch applied and writes their report directory dir,
// as (*runner.Runner).WithPatch(patch).Execute does.
type Execute func(ctx context.Context, patch []byte, scs []*scenario.Scenario, dir string, command []string) (*reports.Report, error)

// RunnerRerunner re-runs scenarios through Execute with each workload's patch, writing one report
// directory per workload under Out.
type RunnerRerunner struct {
	Execute Execute
	Out     string
	Command []string
	// Dirs are the report directories written, in order.
	Dirs []string
}

// NewRunnerRerunner re-runs with the probegate runner base: its connection, parts and options,
// the workload's patch added.
func NewRunnerRerunner(base *runner.Runner, out string, command []string) *RunnerRerunner {
	return &RunnerRerunner{Out: out, Command: command,
		Execute: func(ctx context.Context, patch []byte, scs []*scenario.Scenario, dir string, command []string) (*reports.Report, error) {
			return base.WithPatch(patch).Execute(ctx, scs, dir, command)
		}}
}

// Rerun implements Rerunner.
func (rr *RunnerRerunner) Rerun(ctx context.Context, w *Workload, scs []*scenario.Scenario) ([]reports.ScenarioReport, error) {
	dir := filepath.Join(rr.Out, dirName(w))
	if slices.Contains(rr.Dirs, dir) {
		dir = fmt.Sprintf("%s-%d", dir, len(rr.Dirs)+1)
	}
	rep, err := rr.Execute(ctx, w.Patch, scs, dir, rr.Command)
	if err != nil {
		return nil, fmt.Errorf("re-run: %w", err)
	}
	rr.Dirs = append(rr.Dirs, dir)
	if err := os.WriteFile(filepath.Join(dir, PatchFile), w.Patch, 0o644); err != nil {
		return nil, fmt.Errorf("save the applied patch: %w", err)
	}
	return rep.Scenarios, nil
}

var unsafeName = regexp.MustCompile(`[^a-z0-9.-]+`)

// dirName names a workload's report directory: "deployment-target-no-startup-probe".
func dirName(w *Workload) string {
	n := strings.ToLower(w.Kind) + "-" + w.Name
	if w.Variant != "" {
		n += "-" + w.Variant
	}
	return strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(n), "-"), "-")
}
