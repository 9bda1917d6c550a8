package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/scenarios"
)

func init() { register(newReplayCmd) }

func newReplayCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "replay DIR/report.json",
		Short: "Run a recorded run's scenarios again with the same target, variant and seed",
		Long: `Reads a report written by probegate run and runs each of its scenarios again with the same variant
and seed, so every random choice (which pod, when) repeats. A run against your own target needs the
same --target file again. The new report goes to --out (default _out/replay-<time>).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			scs, err := replayScenarios(args[0], f.target != "")
			if err != nil {
				return withCode(ExitError, err)
			}
			req, err := f.request()
			if err != nil {
				return withCode(ExitError, err)
			}
			req.Resolved = scs
			return runScenarios(cmd, req, f.outDir("replay"), false, nil)
		},
	}
	f.register(cmd, runFlagsUse{recorded: true, outName: "replay"})
	return cmd
}

// replayScenarios reads a report (the file or its directory) and returns its scenarios from the
// catalogue with the recorded variant and seed.
func replayScenarios(path string, haveTarget bool) ([]*scenario.Scenario, error) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		path = filepath.Join(path, reports.ReportFile)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer fh.Close()
	rep, err := reports.ReadJSON(fh)
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", path, err)
	}
	cat, _, err := scenarios.Load(scenarios.Vocabulary())
	if err != nil {
		return nil, err
	}
	var out []*scenario.Scenario
	for _, s := range rep.Scenarios {
		sc, ok := cat.Get(s.Name)
		if !ok {
			return nil, fmt.Errorf("replay %s: scenario %q is not in this build's catalogue (known: %s)", path, s.Name, strings.Join(cat.Names(), ", "))
		}
		if s.Variant == "" && !haveTarget {
			return nil, fmt.Errorf("replay %s: scenario %s ran against a custom target (%s): pass the same --target file", path, s.Name, s.Target)
		}
		cp := *sc
		cp.Seed = s.Seed
		if s.Variant != "" {
			cp.Target.Variant = s.Variant
		}
		out = append(out, &cp)
	}
	return out, nil
}
