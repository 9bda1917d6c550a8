package compare_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/compare"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test ./internal/compare -run %s -update): %v", t.Name(), err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// The drift section under a run's markdown summary lists only what changed: a drift, a new FAIL, a
// FAIL that passes again, a latency drift; the scenarios of one side.
func TestMarkdownGolden(t *testing.T) {
	th, _ := compare.ParseThresholds([]string{"p99=50"})
	withP99 := func(s reports.ScenarioReport, p99 time.Duration) reports.ScenarioReport {
		s.Summary = &reports.Summary{Requests: reports.RequestFigures{P99: p99}}
		return s
	}
	cmp, err := compare.Compare([]compare.Run{
		run("night1", withP99(scenario("pod-delete", lead(verdict.Pass, 5.4), recovery(verdict.Pass, 7.6), restarts(0)), 20*time.Millisecond),
			scenario("db-slowness", recovery(verdict.Fail, 16)), scenario("gone|piped")),
		run("night2", withP99(scenario("pod-delete", lead(verdict.Pass, 2.3), recovery(verdict.Fail, 15.5), restarts(0)), 40*time.Millisecond),
			scenario("db-slowness", recovery(verdict.Pass, 8)), scenario("fresh")),
	}, th)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := compare.WriteMarkdown(&b, cmp); err != nil {
		t.Fatal(err)
	}
	golden(t, "markdown.golden", b.Bytes())
}
