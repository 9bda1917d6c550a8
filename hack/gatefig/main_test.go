package main

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/reports"
)

func TestRunPrintsTheTimeToVerdicts(t *testing.T) {
	base := time.Date(2026, 12, 3, 22, 0, 0, 0, time.UTC)
	sc := func(name string, from, to int) reports.ScenarioReport {
		return reports.ScenarioReport{Name: name, Started: base.Add(time.Duration(from) * time.Second), Finished: base.Add(time.Duration(to) * time.Second)}
	}
	rep := &reports.Report{Started: base, Finished: base.Add(372 * time.Second), Scenarios: []reports.ScenarioReport{
		sc("pod-delete-under-load", 1, 120), sc("rolling-update-under-load", 121, 371),
	}}
	dir := t.TempDir()
	if err := reports.WriteAll(dir, rep); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run(dir, 10*time.Minute, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rolling-update-under-load: ", "4m10s", "2 scenarios to verdicts in 6m12s (budget 10m0s)", "FIGURE time-to-verdict-gate 372 s goal <=600"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	rep.Interrupted = "SIGINT"
	if err := reports.WriteAll(dir, rep); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, 10*time.Minute, &out); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("an interrupted run: %v, want an error", err)
	}
}
