// Command decidedfig prints, for each example app's report directory, the share of its applicable
// verdicts that were decided (PASS or FAIL), in the FIGURE format of make bench, with every
// undecided verdict and every NOT APPLICABLE scenario listed beside it (issue #26's bar: 90 %).
// An app may name several report directories, oldest first: a scenario run again later (say after
// a fix) counts from its last run.
//
//	go run ./hack/decidedfig podinfo=_out/podinfo miniflux=_out/miniflux etcd=_out/etcd,_out/etcd-cold
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/probegate/probegate/internal/benchfig"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: decidedfig APP=REPORT_DIR...")
		os.Exit(2)
	}
	low := false
	for _, arg := range os.Args[1:] {
		app, dirs, ok := strings.Cut(arg, "=")
		if !ok || app == "" || dirs == "" {
			fmt.Fprintf(os.Stderr, "decidedfig: %q: want APP=REPORT_DIR[,REPORT_DIR...]\n", arg)
			os.Exit(2)
		}
		rep, err := latest(strings.Split(dirs, ","))
		if err != nil {
			fmt.Fprintf(os.Stderr, "decidedfig: %v\n", err)
			os.Exit(2)
		}
		for i := range rep.Scenarios {
			s := &rep.Scenarios[i]
			switch {
			case s.NotApplicable != "":
				fmt.Printf("%s: not applicable: %s: %s\n", app, s.Name, s.NotApplicable)
			case s.Error != "":
				fmt.Printf("%s: undecided: %s: error: %s\n", app, s.Name, s.Error)
			case len(s.Verdicts) == 0:
				fmt.Printf("%s: undecided: %s: no verdict\n", app, s.Name)
			}
			for _, v := range s.Verdicts {
				if v.Status != verdict.Pass && v.Status != verdict.Fail && s.NotApplicable == "" {
					fmt.Printf("%s: undecided: %s %s: %s\n", app, s.Name, v.Rule, v.Observed)
				}
			}
		}
		d, a := rep.Decided()
		if a == 0 {
			fmt.Printf("%s: no applicable verdict\n", app)
			low = true
			continue
		}
		rate := float64(d) / float64(a)
		fmt.Printf("%s: %d of %d applicable verdicts decided\n", app, d, a)
		benchfig.Print("decided-rate-"+app, rate, "ratio", ">=0.90")
		low = low || rate < 0.90
	}
	if low {
		os.Exit(1)
	}
}

// latest reads the report directories, oldest first, and keeps each scenario's last run.
func latest(dirs []string) (*reports.Report, error) {
	out := &reports.Report{}
	at := map[string]int{}
	for _, dir := range dirs {
		rep, err := reports.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, s := range rep.Scenarios {
			if i, ok := at[s.Name]; ok {
				out.Scenarios[i] = s
				continue
			}
			at[s.Name] = len(out.Scenarios)
			out.Scenarios = append(out.Scenarios, s)
		}
	}
	return out, nil
}
