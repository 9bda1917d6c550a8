package reports_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/benchfig"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/reports/reportstest"
)

// A 3-pod, 10-minute run at 50 requests per second (about 30 000 requests): the size the HTML
// report must stay readable and quick for.
func tenMinuteReport(b *testing.B) *reports.Report {
	b.Helper()
	sc := reportstest.TenMinutes(50)
	sum := reports.Summarise(sc.Timeline.Entries(), sc.Requests)
	sc.Summary = &sum
	return &reports.Report{SchemaVersion: reports.SchemaVersion, Started: reportstest.Start,
		Finished: reportstest.Start.Add(601 * time.Second), Scenarios: []reports.ScenarioReport{sc}}
}

func BenchmarkWriteHTMLTenMinutes(b *testing.B) {
	r := tenMinuteReport(b)
	var size int
	b.ResetTimer()
	for b.Loop() {
		var buf bytes.Buffer
		if err := reports.WriteHTML(&buf, r); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.StopTimer()
	benchfig.Print("report_html_render_10min_3pods", b.Elapsed().Seconds()*1000/float64(b.N), "ms", "<=500")
	benchfig.Print("report_html_size_10min_3pods", float64(size)/1024, "KiB", "<=2048")
}

func BenchmarkSummariseTenMinutes(b *testing.B) {
	sc := reportstest.TenMinutes(50)
	entries := sc.Timeline.Entries()
	b.ResetTimer()
	for b.Loop() {
		reports.Summarise(entries, sc.Requests)
	}
	b.StopTimer()
	benchfig.Print("report_summarise_10min_30k_requests", b.Elapsed().Seconds()*1000/float64(b.N), "ms", "<=200")
}
