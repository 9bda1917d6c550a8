package cli

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/probegate/probegate/internal/interrupt"
	"github.com/probegate/probegate/internal/runner"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/tune"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/scenarios"
)

func init() { register(newRunCmd) }

func newRunCmd() *cobra.Command {
	var (
		f         runFlags
		names     []string
		variant   string
		seed      int64
		tuneAfter bool
		g         gateFlags
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run scenarios against the bundled target (or --target) and judge the probes",
		Long: `Runs each scenario in a fresh namespace: deploys PostgreSQL, toxiproxy and the target, starts the
observers and the load, injects the scenario's faults on schedule (always reverted, also on Ctrl-C),
then judges the recorded timeline against the scenario's verdicts and the timing oracle computed from
the live pod spec. Scenarios that can share the cluster run side by side (--parallel).

With no --scenario, every scenario of the catalogue runs against the bundled good target on the local
kind cluster, which is created if it is not running. Writes OUT/report.json, junit.xml, report.html
and each scenario's timeline.jsonl (streamed while it runs) and requests.jsonl.

Ctrl-C (SIGINT) or SIGTERM stops the run within seconds: the load stops, every injected fault is
reverted, each scenario's namespace is deleted (kept with --keep), and what was recorded so far is
written to OUT, marked interrupted; scenarios cut short are reported as errors, never as passed. A
second Ctrl-C skips the waiting (judging, slow cleanups) but still reverts the faults.

A scenario the target does not take by its declaration (a database fault and no dependencies in
the target file, a long-request scenario and no requests.takes, a stall and no stall endpoint) or,
in the default suite, that needs more nodes than the cluster has, is NOT APPLICABLE: listed with why, nothing deployed, not counted in the exit code.

--profile names a set of scenarios and a time budget: built-in gate (the rollout, deletion and
readiness scenarios, 10m) or nightly (the whole catalogue, 30m), or a profile file (docs/ci.md).
Before anything is deployed the run estimates the scenarios that apply to the target (overhead,
load, settle and held requests, packed side by side as they will run) and refuses to start, exit 2,
when they do not fit the budget (--budget overrides it), naming the scenarios to drop.

Exit codes: 0 every verdict of every applicable scenario passed, 1 a verdict failed, 3 nothing failed but some verdict was
INCONCLUSIVE (what it needed was not there: a skipped fault, an effect not proven, a watch gap, an
unknown restart cause, requests not attributable to a pod) or no scenario applied to the target,
2 bad input or a harness/setup error,
130 interrupted by SIGINT (Ctrl-C), 143 interrupted by SIGTERM.`,
		Example: `  probegate run
  probegate run --scenario db-slowness --variant deep-liveness
  probegate run --scenario my-scenario.yaml --seed 7 --out _out/mine
  probegate run --target examples/podinfo/target.yaml --image ghcr.io/stefanprodan/podinfo=podinfo:rc1
  probegate run --kubeconfig ~/.kube/config --scenario pod-delete-under-load
  probegate run --scenario cold-start --variant no-startup-probe --tune
  probegate run --profile gate --target target.yaml --image app=app:rc1
  probegate run --profile my-gate.yaml --budget 15m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := f.request()
			if err != nil {
				return withCode(ExitError, err)
			}
			req.Scenarios, req.Variant = names, variant
			if cmd.Flags().Changed("seed") {
				req.Seed = &seed
			}
			if cmd.Flags().Changed("parallel") && f.parallel < 1 {
				return withCode(ExitError, fmt.Errorf("--parallel %d: must be at least 1", f.parallel))
			}
			return runScenarios(cmd, req, f.outDir("run"), tuneAfter, &g)
		},
	}
	f.register(cmd, runFlagsUse{outName: "run"})
	fl := cmd.Flags()
	fl.StringArrayVar(&names, "scenario", nil, "scenario name or scenario file (.yaml); repeat for several (default: all)")
	fl.StringVar(&variant, "variant", "", "bundled target variant for every scenario (default: each scenario's own, normally good)")
	fl.Int64Var(&seed, "seed", 0, "seed for every random choice (default: each scenario's own)")
	g.register(cmd)
	fl.BoolVar(&tuneAfter, "tune", false, "after the run, print probegate tune's recommendations from its report (docs/tune.md)")
	return cmd
}

// runScenarios is the part of run shared with replay: validate everything, check the time budget
// (gf: run's --profile and --budget, nil for replay), set up, run, report, and (tuneAfter) tune
// from the report written.
func runScenarios(cmd *cobra.Command, req runner.Request, out string, tuneAfter bool, gf *gateFlags) error {
	ctx := cmd.Context()
	vocab := scenarios.Vocabulary()
	cat, _, err := scenarios.Load(vocab)
	if err != nil {
		return withCode(ExitError, err)
	}
	var g gate
	if gf != nil {
		if g, err = gf.resolve(cmd, &req, cat); err != nil {
			return withCode(ExitError, err)
		}
	}
	// Everything that can be checked without a cluster is checked first, the budget before anything
	// is deployed.
	planned, app, err := runner.Plan(req, cat, vocab)
	if err != nil {
		return withCode(ExitError, err)
	}
	var custom *scenario.TargetSpec
	if app != nil {
		custom = app.Spec
	}
	if err := g.check(ctx, cmd.OutOrStdout(), req, planned, custom); err != nil {
		return withCode(ExitError, err)
	}
	stderrTTY := term.IsTerminal(int(os.Stderr.Fd()))
	r, scs, progress, err := setupRunner(ctx, req, cat, vocab, stderrTTY)
	if err != nil {
		return err
	}
	defer progress.Close()
	rep, err := r.Execute(ctx, scs, out, os.Args)
	progress.Close()
	if err != nil {
		return withCode(ExitError, err)
	}
	if err := reports.WriteTerminal(cmd.OutOrStdout(), rep, reports.ColorFor(os.Stdout)); err != nil {
		return withCode(ExitError, err)
	}
	var span time.Duration
	for _, sc := range scs {
		span += sc.Span()
	}
	wall := rep.Finished.Sub(rep.Started)
	fmt.Fprintf(cmd.OutOrStdout(), "wall time %s for %d scenarios; sum of their fault+oracle spans %s (ratio %.2f)\nreport: %s\n",
		wall.Round(time.Second), len(scs), span, wall.Seconds()/span.Seconds(), out)
	if tuneAfter {
		printTune(cmd, out)
	}
	if sig := interrupt.From(ctx); sig != nil {
		return withCode(sig.ExitCode(), fmt.Errorf("%s: the run stopped early; what was recorded is in %s", sig, out))
	}
	if rep.ExitCode() == reports.ExitError {
		return withCode(ExitError, fmt.Errorf("%s", firstError(rep)))
	}
	return reportExit(rep)
}

// printTune prints tune's recommendations from the report directory out; a run too broken to tune
// says so without changing the run's exit code.
func printTune(cmd *cobra.Command, out string) {
	runs, err := tune.LoadRuns([]string{out})
	if err == nil {
		fmt.Fprintf(cmd.OutOrStdout(), "\ntune (probegate tune %s; --verify re-runs what motivated each change):\n", out)
		err = tune.WriteText(cmd.OutOrStdout(), tune.Recommend(runs, tune.Options{}))
	}
	if err != nil {
		slog.Warn("tune after the run", "err", err)
	}
}

// firstError is the first scenario error of a run, for the one-line exit message.
func firstError(rep *reports.Report) string {
	for _, s := range rep.Scenarios {
		if s.Error != "" {
			return fmt.Sprintf("scenario %s: %s", s.Name, s.Error)
		}
	}
	return "no scenario ran"
}

func timestamp() string { return time.Now().Format("20060102-150405") }
