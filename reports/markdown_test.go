package reports_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/reports/reportstest"
)

// The markdown summary for a CI page: the sample run (a FAIL with an INCONCLUSIVE verdict beside
// it, a PASS), a scenario that errored and one the target does not take.
func TestMarkdownSummaryGolden(t *testing.T) {
	r := reportstest.SampleReport(50)
	errored := reportstest.PodDelete(50)
	errored.Name, errored.Verdicts, errored.Summary = "rolling-update", nil, nil
	errored.Error = "deploy target into pg-x: rollout | timed out\nafter 5m"
	na := reportstest.PodDelete(50)
	na.Name, na.Summary = "db-slowness", nil
	na.NotApplicable = "the target file declares no dependency to slow"
	na.Verdicts = []verdict.Result{{Rule: "readiness-withdrawn-in-window", Status: verdict.NotApplicable}}
	r.Scenarios = append(r.Scenarios, errored, na)
	var b bytes.Buffer
	if err := reports.WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "markdown.golden", b.Bytes())
	for i, line := range strings.Split(b.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > 260 {
			t.Errorf("line %d is %d runes long: %s", i+1, n, line)
		}
	}
}

func TestMarkdownEscape(t *testing.T) {
	for in, want := range map[string]string{
		"a | b":                  `a \| b`,
		"two\nlines":             "two lines",
		"<script>":               "&lt;script&gt;",
		"`code` and *bold*":      "\\`code\\` and \\*bold\\*",
		strings.Repeat("x", 400): strings.Repeat("x", 159) + "…",
	} {
		if got := reports.MarkdownEscape(in); got != want {
			t.Errorf("MarkdownEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
