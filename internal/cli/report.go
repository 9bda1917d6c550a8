package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/internal/compare"
	"github.com/probegate/probegate/reports"
)

func init() { register(newReportCmd) }

type reportFlags struct {
	markdown   bool
	baselines  []string
	thresholds []string
}

func newReportCmd() *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Re-render a run's junit.xml, report.html and terminal summary from its saved files",
		Long: `Reads DIR/report.json and the timeline.jsonl and requests.jsonl files it names, writes junit.xml and
report.html again and prints the terminal summary (coloured only on a terminal; NO_COLOR turns colour
off). Nothing is re-judged: the verdicts are the recorded ones.

With --markdown it writes nothing and prints a compact markdown summary for a CI page (GitHub's step
summary, a merge request comment) from report.json alone: each scenario's status, each FAIL and
INCONCLUSIVE verdict with its one line, each NOT APPLICABLE scenario with its reason; with --baseline
OLD (repeatable, oldest first) also what changed against those runs, as probegate compare finds it.

Exit codes: 0 every verdict passed, 1 a verdict failed, 3 none failed but some verdict was
INCONCLUSIVE, 2 a scenario could not be run (the run was interrupted, for one) or DIR is missing or
not a readable probegate report. --baseline does not change them: gate on drift with probegate compare.`,
		Example: `  probegate report _out/run-1
  probegate report _out/nightly --markdown --baseline _out/nightly-prev >> "$GITHUB_STEP_SUMMARY"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if filepath.Base(dir) == reports.ReportFile {
				if info, err := os.Stat(dir); err == nil && !info.IsDir() {
					dir = filepath.Dir(dir)
				}
			}
			if f.markdown {
				return reportMarkdown(cmd, dir, f)
			}
			if len(f.baselines) > 0 || len(f.thresholds) > 0 {
				return withCode(ExitError, errors.New("--baseline and --threshold go with --markdown (or use probegate compare)"))
			}
			rep, err := reports.LoadDir(dir)
			if err != nil {
				return withCode(ExitError, err)
			}
			if err := reports.Render(dir, rep); err != nil {
				return withCode(ExitError, fmt.Errorf("render report in %s: %w", dir, err))
			}
			out := cmd.OutOrStdout()
			color := out == os.Stdout && reports.ColorFor(os.Stdout)
			if err := reports.WriteTerminal(out, rep, color); err != nil {
				return withCode(ExitError, err)
			}
			fmt.Fprintf(out, "report: %s\n", filepath.Join(dir, reports.HTMLFile))
			return reportExit(rep)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.markdown, "markdown", false, "print a compact markdown summary instead (writes no file)")
	fs.StringArrayVar(&f.baselines, "baseline", nil, "with --markdown: an earlier run (directory or report.json) to compare with; repeat for a trend, oldest first")
	fs.StringArrayVar(&f.thresholds, "threshold", nil, "with --baseline: drift threshold, PCT or RULE=PCT (see probegate compare)")
	return cmd
}

// reportMarkdown prints the run's markdown summary and, against its baselines, the comparison's
// news. The run's own outcome is the exit code.
func reportMarkdown(cmd *cobra.Command, dir string, f reportFlags) error {
	th, err := compare.ParseThresholds(f.thresholds)
	if err != nil {
		return withCode(ExitError, err)
	}
	runs, err := compare.LoadAll(append(append([]string(nil), f.baselines...), dir))
	if err != nil {
		return withCode(ExitError, err)
	}
	rep := runs[len(runs)-1].Report
	out := cmd.OutOrStdout()
	if err := reports.WriteMarkdown(out, rep); err != nil {
		return withCode(ExitError, err)
	}
	if len(runs) > 1 {
		c, err := compare.Compare(runs, th)
		if err != nil {
			return withCode(ExitError, err)
		}
		if err := compare.WriteMarkdown(out, c); err != nil {
			return withCode(ExitError, err)
		}
	}
	return reportExit(rep)
}

// reportExit turns a report's outcome into the command's exit: nil (0), a verdict failure (1),
// an inconclusive run (3) or the first scenario error (2).
func reportExit(rep *reports.Report) error {
	switch rep.ExitCode() {
	case reports.ExitPass:
		return nil
	case reports.ExitFail:
		return withCode(ExitFail, errFailed)
	case reports.ExitInconclusive:
		return withCode(ExitInconclusive, errFailed)
	}
	for _, s := range rep.Scenarios {
		if s.Error != "" {
			return withCode(ExitError, fmt.Errorf("scenario %s could not run: %s", s.Name, s.Error))
		}
	}
	if rep.Interrupted != "" {
		return withCode(ExitError, fmt.Errorf("the run was interrupted by %s", rep.Interrupted))
	}
	return withCode(ExitError, fmt.Errorf("the report holds no scenario result"))
}
