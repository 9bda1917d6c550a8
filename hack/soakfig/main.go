// Command soakfig compares the report directories of repeated suite runs (make soak) and prints
// the stability figures in the FIGURE format of make bench, with every flipped verdict listed.
//
//	go run ./hack/soakfig [--phase NAME] _out/soak/run-1 _out/soak/run-2 ...
//
// With --phase, the figures are named for it (verdict-flips-multi-node): make soak prints one set
// per phase.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/probegate/probegate/fixtures/target/config"
	"github.com/probegate/probegate/internal/benchfig"
	"github.com/probegate/probegate/internal/soak"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/scenarios"
)

func main() {
	phase := flag.String("phase", "", "name the figures for this soak phase (one-node, multi-node)")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: soakfig [--phase NAME] REPORT_DIR REPORT_DIR... (at least two runs to compare)")
		os.Exit(2)
	}
	suffix := ""
	if *phase != "" {
		suffix = "-" + *phase
	}
	var runs []*reports.Report
	for _, dir := range flag.Args() {
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
	benchfig.Print("verdict-flips"+suffix, float64(len(res.Flips)), "count", "==0")
	benchfig.Print("inconclusive-rate"+suffix, res.InconclusiveRate(), "ratio", "<=0.01")
	if len(res.Flips) > 0 {
		os.Exit(1)
	}
}
