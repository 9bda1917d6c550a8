// Command setupfig prints how long each scenario of a run's report directory took from its
// namespace to its load, split into the target's own rollout, a capacity search and the harness's
// overhead, and the largest overhead in the FIGURE format of make bench (FIGURE setup-overhead;
// reports.SetupOf says how each part is measured). NOT APPLICABLE scenarios are left out.
//
//	go run ./hack/setupfig _out/run-1
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
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: setupfig REPORT_DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "setupfig: %v\n", err)
		os.Exit(2)
	}
}

// run prints one line per scenario of the report in dir and FIGURE setup-overhead, the largest
// overhead among them; it fails when no scenario could be measured.
func run(dir string, w io.Writer) error {
	rep, err := reports.LoadDir(dir)
	if err != nil {
		return err
	}
	worst, measured := time.Duration(0), 0
	for _, s := range rep.Scenarios {
		if s.NotApplicable != "" || s.Timeline == nil {
			continue
		}
		setup, err := reports.SetupOf(s.Timeline.Entries())
		if err != nil {
			fmt.Fprintf(w, "%s: not measured: %v\n", s.Name, err)
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", s.Name, setup)
		worst, measured = max(worst, setup.Overhead), measured+1
	}
	if measured == 0 {
		return fmt.Errorf("%s: no scenario reached its load with its pods' API times on the timeline", dir)
	}
	benchfig.Out = w
	benchfig.Print("setup-overhead", worst.Round(100*time.Millisecond).Seconds(), "s", "<=5")
	return nil
}
