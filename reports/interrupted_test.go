package reports_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// An interrupted run is never a pass, says so in every output, and keeps the mark in report.json.
func TestInterruptedRun(t *testing.T) {
	r := &reports.Report{
		Interrupted: "SIGINT",
		Scenarios: []reports.ScenarioReport{
			// finished before the signal: its verdicts stand
			{Name: "a", Verdicts: []verdict.Result{{Rule: "r", Status: verdict.Pass}}},
		},
	}
	if r.ExitCode() == reports.ExitPass {
		t.Errorf("interrupted run exits %d", r.ExitCode())
	}
	var term bytes.Buffer
	if err := reports.WriteTerminal(&term, r, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(term.String(), "interrupted by SIGINT: the run stopped early") {
		t.Errorf("terminal summary does not say the run was interrupted:\n%s", term.String())
	}
	var page bytes.Buffer
	if err := reports.WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "interrupted by SIGINT") {
		t.Errorf("report.html does not say the run was interrupted")
	}
	var js bytes.Buffer
	if err := reports.WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"interrupted": "SIGINT"`) {
		t.Errorf("report.json:\n%s", js.String())
	}
	back, err := reports.ReadJSON(&js)
	if err != nil || back.Interrupted != "SIGINT" {
		t.Fatalf("read back: %v, interrupted %q", err, back.Interrupted)
	}

	r.Interrupted = ""
	term.Reset()
	reports.WriteTerminal(&term, r, false)
	if strings.Contains(term.String(), "interrupted") || r.ExitCode() != reports.ExitPass {
		t.Errorf("a finished run reads as interrupted (exit %d):\n%s", r.ExitCode(), term.String())
	}
}
