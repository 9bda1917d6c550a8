package main

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/reports"
)

// TestRunPrintsTheWorstOverhead writes a hand-made report of two scenarios, one of which never
// reached its load, and reads the figure back from its directory.
func TestRunPrintsTheWorstOverhead(t *testing.T) {
	base := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	scenario := func(name string, loadAt float64, readyAt int) reports.ScenarioReport {
		tl := timeline.New(base)
		at := func(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }
		tl.Append(timeline.Entry{At: at(0.5), Kind: timeline.KindMark, Mark: &timeline.Mark{Name: reports.MarkDeploy}})
		created, ready := base.Add(2*time.Second), base.Add(time.Duration(readyAt)*time.Second)
		tl.Append(timeline.Entry{At: at(9), Kind: timeline.KindPod, Pod: "web-a", APITime: &created,
			PodChange: &timeline.PodTransition{Field: "created", To: "Running"}})
		tl.Append(timeline.Entry{At: at(9), Kind: timeline.KindPod, Pod: "web-a", APITime: &ready,
			PodChange: &timeline.PodTransition{Field: "condition/Ready", To: "True"}})
		if loadAt > 0 {
			tl.Append(timeline.Entry{At: at(loadAt), Kind: timeline.KindMark, Mark: &timeline.Mark{Name: reports.MarkLoadStart}})
		}
		return reports.ScenarioReport{Name: name, Timeline: tl}
	}
	rep := &reports.Report{Started: base, Finished: base.Add(time.Minute), Scenarios: []reports.ScenarioReport{
		scenario("pod-delete-under-load", 13.5, 8), // rollout 6 s of 13 s: overhead 7 s
		scenario("db-slowness", 10.5, 8),           // overhead 4 s
		scenario("cut-short", 0, 8),
	}}
	dir := t.TempDir()
	if err := reports.WriteAll(dir, rep); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run(dir, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"pod-delete-under-load: namespace → load 13s = rollout 6s (1 pods) + overhead 7s",
		"db-slowness: namespace → load 10s = rollout 6s (1 pods) + overhead 4s",
		"cut-short: not measured: ",
		"FIGURE setup-overhead 7 s goal <=5\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("setupfig printed:\n%s\nwant a line with %q", out.String(), want)
		}
	}
}
