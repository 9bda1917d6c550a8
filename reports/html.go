package reports

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/probegate/probegate/internal/verdict"
)

//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"f":       func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"offset":  Offset,
	"seconds": Seconds,
	"millis":  Millis,
	"percent": percent,
	"stamp":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"status":  statusClass,
	"add":     func(a, b float64) float64 { return a + b },
}).Parse(htmlSource))

type htmlPage struct {
	R         *Report
	FinalLine string
	Headline  string // FAILED, INCONCLUSIVE or ERROR: what the title says when the run did not pass
	Scenarios []scenarioHTML
}

type scenarioHTML struct {
	ID            string
	S             *ScenarioReport
	Status        verdict.Status
	Verdicts      []verdictHTML
	Chart         chartView
	Summary       *Summary
	FailedClasses []countKV
	Restarts      []countKV
	Windows       []PlacedWindow
	OracleLines   []string
}

type verdictHTML struct {
	ID         string
	MarkerHref string
	R          verdict.Result
	At         string
	// Evidence shows the first few pointers; MoreEvidence folds the rest away.
	Evidence     []string
	MoreEvidence []string
}

// shownEvidence is how many evidence lines a verdict row shows before folding the rest.
const shownEvidence = 3

type countKV struct {
	Key   string
	Count int
}

// WriteHTML writes report.html: one self-contained page (inline CSS and SVG, no scripts, fonts or
// network references) with a verdict table, an SVG timeline and summary tables per scenario.
// Scenarios whose Timeline is nil are drawn from what the report itself holds.
func WriteHTML(w io.Writer, r *Report) error {
	page := htmlPage{R: r, FinalLine: FinalLine(r.Counts()), Headline: headline(r.ExitCode())}
	if r.Interrupted != "" {
		page.FinalLine += "; interrupted by " + r.Interrupted + ": the run stopped early"
	}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		id := fmt.Sprintf("s%d", i)
		sv := scenarioHTML{ID: id, S: s, Status: s.Status(), Summary: s.Summary}
		var entries = s.entries()
		sv.Chart = buildChart(id, s, entries, s.Requests)
		markers := map[string]bool{}
		for _, m := range sv.Chart.Verdicts {
			markers[m.ID] = true
		}
		for j, v := range s.Verdicts {
			vh := verdictHTML{ID: verdictRowID(id, j), R: v}
			if v.At != nil {
				vh.At = Offset(*v.At)
				if v.Status == verdict.Fail && markers[verdictMarkerID(id, j)] {
					vh.MarkerHref = "#" + verdictMarkerID(id, j)
				}
			}
			for k, e := range v.Evidence {
				line := shortEvidenceLine(e)
				if k < shownEvidence {
					vh.Evidence = append(vh.Evidence, line)
				} else {
					vh.MoreEvidence = append(vh.MoreEvidence, line)
				}
			}
			sv.Verdicts = append(sv.Verdicts, vh)
		}
		sv.Windows = s.PlacedWindows()
		if s.Oracle != nil {
			for _, l := range s.Oracle.Lines() {
				if l != "" {
					sv.OracleLines = append(sv.OracleLines, l)
				}
			}
		}
		if s.Summary != nil {
			sv.FailedClasses = sortedCounts(s.Summary.Requests.FailedByClass)
			sv.Restarts = sortedCounts(s.Summary.Restarts)
		}
		page.Scenarios = append(page.Scenarios, sv)
	}
	if err := htmlTemplate.Execute(w, page); err != nil {
		return fmt.Errorf("render report.html: %w", err)
	}
	return nil
}

func sortedCounts(m map[string]int) []countKV {
	out := make([]countKV, 0, len(m))
	for k, v := range m {
		out = append(out, countKV{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// headline is the page title's word for a run that did not pass.
func headline(exit int) string {
	switch exit {
	case ExitPass:
		return ""
	case ExitFail:
		return "FAILED"
	case ExitInconclusive:
		return "INCONCLUSIVE"
	}
	return "ERROR"
}
