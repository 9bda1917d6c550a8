package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/internal/tune"
)

func init() { register(newTuneCmd) }

type tuneOptions struct {
	output string
}

func newTuneCmd() *cobra.Command {
	var o tuneOptions
	cmd := &cobra.Command{
		Use:   "tune REPORT_DIR...",
		Short: "Recommend probe and shutdown settings from the evidence of recorded runs",
		Long: `Reads one or more report directories (report.json, each scenario's timeline.jsonl and
requests.jsonl) and recommends, per workload and container, the startup budget, readiness timeout,
liveness failureThreshold, preStop withdrawal delay and terminationGracePeriodSeconds, each with the
formula and the measured evidence (scenario, pod, times) it came from. A field without evidence is
left alone and names the scenario that would supply it. Formulas and margins: docs/tune.md.

  -o text   current → recommended, why, formula, evidence (default)
  -o json   every recommendation with all its evidence
  -o patch  a strategic-merge patch per workload (kubectl patch --type strategic, or kustomize)

tune --verify (apply the patch in a fresh namespace and re-run the motivating scenarios) is not
implemented yet. Exit codes: 0 done, 2 bad input (a missing or unreadable report directory).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			write, ok := map[string]func(*cobra.Command, tune.Result) error{
				"text":  func(c *cobra.Command, r tune.Result) error { return tune.WriteText(c.OutOrStdout(), r) },
				"json":  func(c *cobra.Command, r tune.Result) error { return tune.WriteJSON(c.OutOrStdout(), r) },
				"patch": func(c *cobra.Command, r tune.Result) error { return tune.WritePatch(c.OutOrStdout(), r) },
			}[o.output]
			if !ok {
				return withCode(ExitError, fmt.Errorf("unknown output %q: want text, json or patch", o.output))
			}
			runs, err := tune.LoadRuns(args)
			if err != nil {
				return withCode(ExitError, err)
			}
			if err := write(cmd, tune.Recommend(runs, tune.Options{})); err != nil {
				return withCode(ExitError, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output: text, json or patch")
	return cmd
}
