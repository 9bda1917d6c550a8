package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/reports"
)

func init() { register(newReportCmd) }

func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Re-render a run's junit.xml, report.html and terminal summary from its saved files",
		Long: `Reads DIR/report.json and the timeline.jsonl and requests.jsonl files it names, writes junit.xml and
report.html again and prints the terminal summary (coloured only on a terminal; NO_COLOR turns colour
off). Nothing is re-judged: the verdicts are the recorded ones.

Exit codes: 0 every verdict passed, 1 a verdict failed, 3 none failed but some verdict was
INCONCLUSIVE, 2 a scenario could not be run (the run was interrupted, for one) or DIR is missing or
not a readable probegate report.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if filepath.Base(dir) == reports.ReportFile {
				if info, err := os.Stat(dir); err == nil && !info.IsDir() {
					dir = filepath.Dir(dir)
				}
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
