package compare_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/probegate/probegate/internal/benchfig"
	"github.com/probegate/probegate/internal/compare"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/reports/reportstest"
)

// nightReport is a 13-scenario run, the default suite's size: each scenario the sample's failing
// one with its oracle and summary, six verdicts with a full list of evidence and a measure that
// grows with night.
func nightReport(b *testing.B, night int) *reports.Report {
	b.Helper()
	r := reportstest.SampleReport(5)
	base := r.Scenarios[0]
	rules := []string{"terminating-before-exit", "readiness-withdrawn-in-window", "recovery-within",
		"failed-requests-budget", "no-unexpected-restarts", "min-ready-endpoints"}
	r.Scenarios = nil
	for i := range 13 {
		s := base
		s.Name = fmt.Sprintf("scenario-%02d", i)
		s.Verdicts = nil
		for j, rule := range rules {
			v := verdict.Result{Rule: rule, Title: rule, Status: verdict.Pass, Expected: "within its bound", Observed: "measured",
				Figures: map[string]float64{"a": 1, "b": 2},
				Measure: &verdict.Measure{Name: rule, Value: float64((j+1)*night) * 0.4, Unit: "s", Bound: 10, Direction: verdict.AtMost}}
			for k := range 20 {
				v.Evidence = append(v.Evidence, verdict.Evidence{T: 1e9 * 30, Seq: int64(k), Note: "an entry that decided the verdict, with its words"})
			}
			s.Verdicts = append(s.Verdicts, v)
		}
		r.Scenarios = append(r.Scenarios, s)
	}
	return r
}

func writeReport(b *testing.B, dir string, r *reports.Report) string {
	b.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, reports.ReportFile))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := reports.WriteJSON(f, r); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkCompareNights is `probegate compare` on two 13-scenario runs: read both report.json
// files, compare, and write the table, the JSON and the HTML page.
func BenchmarkCompareNights(b *testing.B) {
	tmp := b.TempDir()
	old := writeReport(b, filepath.Join(tmp, "night1"), nightReport(b, 1))
	new := writeReport(b, filepath.Join(tmp, "night2"), nightReport(b, 3))
	th, _ := compare.ParseThresholds(nil)
	b.ResetTimer()
	for b.Loop() {
		runs, err := compare.LoadAll([]string{old, new})
		if err != nil {
			b.Fatal(err)
		}
		c, err := compare.Compare(runs, th)
		if err != nil {
			b.Fatal(err)
		}
		if c.Drifts == 0 || len(c.Scenarios) != 13 {
			b.Fatalf("%d scenarios, %d drifts", len(c.Scenarios), c.Drifts)
		}
		for _, write := range []func(io.Writer, *compare.Comparison) error{compare.WriteText, compare.WriteJSON, compare.WriteHTML} {
			if err := write(io.Discard, c); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	benchfig.Print("compare-seconds", b.Elapsed().Seconds()/float64(b.N), "s", "<=1")
}
