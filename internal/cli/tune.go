package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/probegate/probegate/internal/interrupt"
	"github.com/probegate/probegate/internal/tune"
	"github.com/probegate/probegate/internal/tune/verify"
	"github.com/probegate/probegate/scenarios"
)

func init() { register(newTuneCmd) }

type tuneOptions struct {
	output string
	verify bool
	// run is for --verify: where and how the motivating scenarios run again.
	run runFlags
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

--verify closes the loop on the cluster: it applies each workload's patch to the target in fresh
namespaces, re-runs exactly the scenario runs whose measurements motivated each change (same
scenario, variant and seed), and prints the verdicts before (from the reports) and after side by
side, with one conclusion per recommendation: fixed, holds, not fixed, inconclusive, or why it was
not verified (left alone, the app's own setting, cannot-tune: a liveness handler that checks a
dependency is wrong whatever its numbers, so no number is verified for it). Runs of your own app
need the same --target file (and --image swaps) they ran with. The re-runs' reports go to --out.

Exit codes: 0 done (with --verify: every rule of every re-run passes), 1 some rule still fails
after the patch, 2 bad input or a re-run that did not reach its verdicts, 3 something is
INCONCLUSIVE after the patch or nothing could be verified.`,
		Example: `  probegate tune _out
  probegate tune -o patch _out > fix.yaml
  probegate run --scenario cold-start --variant no-startup-probe --out /tmp/a; probegate tune /tmp/a --verify   # run exits 1: the variant FAILs`,
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
			if o.verify && o.output != "text" {
				return withCode(ExitError, fmt.Errorf("--verify prints a before → after table: -o %s cannot be combined with it", o.output))
			}
			if !o.verify && (o.run.target != "" || len(o.run.images) > 0 || o.run.out != "" || o.run.kubeconfig != "") {
				return withCode(ExitError, fmt.Errorf("--target, --image, --out and --kubeconfig are for --verify"))
			}
			runs, err := tune.LoadRuns(args)
			if err != nil {
				return withCode(ExitError, err)
			}
			res := tune.Recommend(runs, tune.Options{})
			if o.verify {
				return verifyTune(cmd, o, res, runs)
			}
			if err := write(cmd, res); err != nil {
				return withCode(ExitError, err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.output, "output", "o", "text", "output: text, json or patch")
	fl.BoolVar(&o.verify, "verify", false, "apply the patch in fresh namespaces and re-run the scenarios that motivated each change (needs the cluster)")
	o.run.register(cmd, runFlagsUse{prefix: "with --verify: ", recorded: true, outName: "verify"})
	return cmd
}

// verifyTune plans the verification, re-runs what motivated each change on the cluster (nothing
// is deployed when nothing can be verified), prints the table and exits by the re-runs' verdicts.
func verifyTune(cmd *cobra.Command, o tuneOptions, res tune.Result, runs []tune.Run) error {
	ctx := cmd.Context()
	vocab := scenarios.Vocabulary()
	cat, _, err := scenarios.Load(vocab)
	if err != nil {
		return withCode(ExitError, err)
	}
	plan, err := verify.NewPlan(res, runs, cat, o.run.target != "")
	if err != nil {
		return withCode(ExitError, err)
	}
	req, err := o.run.request()
	if err != nil {
		return withCode(ExitError, err)
	}
	if o.run.parallel < 0 {
		return withCode(ExitError, fmt.Errorf("--parallel %d: must be at least 1", o.run.parallel))
	}
	var dirs []string
	if scs := plan.Scenarios(); len(scs) > 0 {
		req.Resolved = scs
		r, _, progress, err := setupRunner(ctx, req, cat, vocab, term.IsTerminal(int(os.Stderr.Fd())))
		if err != nil {
			return err
		}
		defer progress.Close()
		rr := verify.NewRunnerRerunner(r, o.run.outDir("verify"), os.Args)
		err = verify.Run(ctx, plan, rr)
		progress.Close()
		if err != nil {
			return withCode(ExitError, err)
		}
		dirs = rr.Dirs
	}
	if err := verify.WriteText(cmd.OutOrStdout(), plan); err != nil {
		return withCode(ExitError, err)
	}
	for _, d := range dirs {
		fmt.Fprintf(cmd.OutOrStdout(), "after: %s\n", d)
	}
	if sig := interrupt.From(ctx); sig != nil {
		return withCode(sig.ExitCode(), fmt.Errorf("%s: the verification stopped early", sig))
	}
	switch code := plan.ExitCode(); code {
	case verify.ExitPass:
		return nil
	case verify.ExitError:
		return withCode(ExitError, fmt.Errorf("a re-run did not reach its verdicts (see above)"))
	default:
		return withCode(code, errFailed)
	}
}
