package runner

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/interrupt"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/version"
	"github.com/probegate/probegate/reports"
)

// Execute runs scenarios and writes the report directory out (report.json, junit.xml,
// report.html and each scenario's timeline.jsonl and requests.jsonl; the timelines are streamed
// there while the scenarios run). It returns the report; its ExitCode says how the run went. An
// error means the report could not be written. When ctx ends early (Ctrl-C), what was recorded
// until then is written all the same and the report is marked Interrupted.
func (r *Runner) Execute(ctx context.Context, scs []*scenario.Scenario, out string, command []string) (*reports.Report, error) {
	rep := &reports.Report{
		ProbegateVersion:  version.String(),
		KubernetesVersion: r.Conn.Version,
		Cluster:           r.Conn.Name,
		Started:           time.Now(),
		Command:           command,
	}
	r.reportDir = out
	rep.Scenarios = r.RunAll(ctx, scs)
	rep.Finished = time.Now()
	if ctx.Err() != nil {
		rep.Interrupted = "cancelled"
		if s := interrupt.From(ctx); s != nil {
			rep.Interrupted = s.Name()
		}
	}
	if err := reports.WriteAll(out, rep); err != nil {
		return rep, fmt.Errorf("write report to %s: %w", out, err)
	}
	return rep, nil
}

// replayCommand is the command line that reruns exactly this scenario run.
func replayCommand(s *reports.ScenarioReport, custom *scenario.TargetSpec, images map[string]string) string {
	parts := []string{"probegate", "run", "--scenario", s.Name, "--seed", strconv.FormatInt(s.Seed, 10)}
	if custom != nil {
		parts = append(parts, "--target", custom.File)
		keys := make([]string, 0, len(images))
		for k := range images {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			parts = append(parts, "--image", k+"="+images[k])
		}
	} else if s.Variant != "" {
		parts = append(parts, "--variant", s.Variant)
	}
	return strings.Join(parts, " ")
}
