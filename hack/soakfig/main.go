// Command soakfig compares the report directories of repeated suite runs (make soak) and prints
// the stability figures in the FIGURE format of make bench, with every flipped verdict listed.
//
//	go run ./hack/soakfig _out/soak/run-1 _out/soak/run-2 ...
package main

import (
	"fmt"
	"os"

	"github.com/probegate/probegate/fixtures/target/config"
	"github.com/probegate/probegate/internal/benchfig"
	"github.com/probegate/probegate/internal/soak"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/scenarios"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: soakfig REPORT_DIR REPORT_DIR... (at least two runs to compare)")
		os.Exit(2)
	}
	var runs []*reports.Report
	for _, dir := range os.Args[1:] {
		rep, err := reports.LoadDir(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "soakfig: %v\n", err)
			os.Exit(2)
		}
		runs = append(runs, rep)
	}
	_, matrix, err := scenarios.Load(scenarios.Vocabulary())
	if err != nil {
		fmt.Fprintf(os.Stderr, "soakfig: %v\n", err)
		os.Exit(2)
	}
	// Counted: what the suite and the matrix assert (the good target's verdicts, each row's
	// designated rules); a variant's other verdicts are listed, not counted.
	res := soak.Compare(runs, soak.Asserted(string(config.Good), matrix))
	for _, f := range res.Flips {
		fmt.Printf("flip: %s\n", f)
	}
	for _, f := range res.Unasserted {
		fmt.Printf("unasserted flip (not counted): %s\n", f)
	}
	fmt.Printf("%d runs, %d asserted verdicts, %d inconclusive, %d flips (%d unasserted)\n",
		res.Runs, res.Verdicts, res.Inconclusive, len(res.Flips), len(res.Unasserted))
	benchfig.Print("verdict-flips", float64(len(res.Flips)), "count", "==0")
	benchfig.Print("inconclusive-rate", res.InconclusiveRate(), "ratio", "<=0.01")
	if len(res.Flips) > 0 {
		os.Exit(1)
	}
}
