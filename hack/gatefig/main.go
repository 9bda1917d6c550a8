// Command gatefig prints how long a gate run took from its start to its verdicts, in the FIGURE
// format of make bench (FIGURE time-to-verdict-gate), against the gate's budget (the built-in gate
// profile's 10 minutes unless given), with what each scenario took.
//
//	go run ./hack/gatefig _out/ci/gate [10m]
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/probegate/probegate/internal/benchfig"
	"github.com/probegate/probegate/reports"
)

func main() {
	if len(os.Args) < 2 || len(os.Args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: gatefig REPORT_DIR [BUDGET]")
		os.Exit(2)
	}
	budget := 10 * time.Minute
	if len(os.Args) == 3 {
		var err error
		if budget, err = time.ParseDuration(os.Args[2]); err != nil || budget <= 0 {
			fmt.Fprintf(os.Stderr, "gatefig: budget %q: want a positive duration (10m)\n", os.Args[2])
			os.Exit(2)
		}
	}
	if err := run(os.Args[1], budget, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "gatefig: %v\n", err)
		os.Exit(2)
	}
}

// run prints each scenario's time and the run's time to verdicts (report started → finished); it
// fails on a run that did not finish (interrupted, or no scenario).
func run(dir string, budget time.Duration, w io.Writer) error {
	rep, err := reports.LoadDir(dir)
	if err != nil {
		return err
	}
	switch {
	case rep.Interrupted != "":
		return fmt.Errorf("%s: the run was interrupted (%s): no time to verdict", dir, rep.Interrupted)
	case len(rep.Scenarios) == 0 || !rep.Finished.After(rep.Started):
		return fmt.Errorf("%s: no finished run in the report", dir)
	}
	for _, s := range rep.Scenarios {
		fmt.Fprintf(w, "%s: %s, %s\n", s.Name, s.Status(), s.Finished.Sub(s.Started).Round(time.Second))
	}
	took := rep.Finished.Sub(rep.Started)
	fmt.Fprintf(w, "%d scenarios to verdicts in %s (budget %s)\n", len(rep.Scenarios), took.Round(time.Second), budget)
	benchfig.Out = w
	benchfig.Print("time-to-verdict-gate", took.Round(time.Second).Seconds(), "s", fmt.Sprintf("<=%g", budget.Seconds()))
	return nil
}
