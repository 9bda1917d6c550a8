package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/internal/compare"
)

func init() { register(newCompareCmd) }

type compareFlags struct {
	json       bool
	html       string
	thresholds []string
}

func newCompareCmd() *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare OLD... NEW",
		Short: "Compare runs: status changes and measures drifting toward their bounds",
		Long: `Sets one or more earlier runs (OLD, oldest first) beside a new one (NEW, last). Each argument is a
report.json or a run directory holding one. Per scenario and verdict it prints the status in every
run and the quantity the verdict measured (report.json's measure: a lead, a recovery time, failed
requests, restarts, the lowest ready endpoints) with its bound.

A verdict that FAILs in NEW and did not in the baseline (the last OLD run that has it) is a NEW FAIL.
A measure drifts when it lost more than the threshold of its headroom to its bound: from the OLD runs'
median (by headroom) to NEW. --threshold 25 sets the default (25 %), --threshold RULE=PCT one rule's;
--threshold p99=PCT also flags the load's p99 latency rising by more than PCT of its baseline (it has
no bound, so it is shown but not flagged otherwise). Scenarios found in one side only are listed.

Exit codes: 0 no regression, 4 a regression (a NEW FAIL or a drift), 2 bad input (an argument that is
missing, unreadable, not a probegate report, or of a newer schema; one line on stderr).`,
		Example: `  probegate compare _out/nightly-1 _out/nightly-2
  probegate compare _out/n1 _out/n2 _out/n3 _out/n4 --threshold 30 --threshold recovery-within=50
  probegate compare old/report.json new/report.json --json > compare.json
  probegate compare _out/n1 _out/n2 --html compare.html`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return fmt.Errorf("compare needs an OLD and a NEW run (got %d argument(s))", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(cmd, args, f) },
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.json, "json", false, "print the comparison as JSON instead of a table")
	fs.StringVar(&f.html, "html", "", "also write the comparison as a self-contained HTML page to this file")
	fs.StringArrayVar(&f.thresholds, "threshold", nil, "share of its headroom a measure may lose before it drifts: PCT for every rule (default 25), RULE=PCT for one (repeatable; p99=PCT for the load's latency)")
	return cmd
}

func runCompare(cmd *cobra.Command, args []string, f compareFlags) error {
	th, err := compare.ParseThresholds(f.thresholds)
	if err != nil {
		return withCode(ExitError, err)
	}
	runs, err := compare.LoadAll(args)
	if err != nil {
		return withCode(ExitError, err)
	}
	c, err := compare.Compare(runs, th)
	if err != nil {
		return withCode(ExitError, err)
	}
	if f.html != "" {
		if err := writeHTMLFile(f.html, c); err != nil {
			return withCode(ExitError, err)
		}
	}
	out := cmd.OutOrStdout()
	if f.json {
		err = compare.WriteJSON(out, c)
	} else {
		err = compare.WriteText(out, c)
	}
	if err != nil {
		return withCode(ExitError, err)
	}
	if c.Regressions > 0 {
		return withCode(ExitRegression, errFailed)
	}
	return nil
}

func writeHTMLFile(path string, c *compare.Comparison) (err error) {
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write comparison page: %w", err)
	}
	defer func() { err = errors.Join(err, file.Close()) }()
	return compare.WriteHTML(file, c)
}
