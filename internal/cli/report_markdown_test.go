package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/verdict"
)

func TestReportMarkdown(t *testing.T) {
	prev := nightly(t, 0.8, verdict.Pass)
	now := nightly(t, 1.7, verdict.Pass)
	code, stdout, stderr := runMain(t, "report", now, "--markdown", "--baseline", prev)
	if code != ExitFail { // the run's own outcome: its db-slow scenario fails
		t.Fatalf("exit %d, want %d: %s", code, ExitFail, stderr)
	}
	for _, want := range []string{
		"### probegate: 2 scenarios: 1 passed, 1 failed",
		"| db-slow/bad-liveness-db | **FAIL** |",
		"`never-withdraw-all` FAIL: 0 ready endpoints for 37.8 s",
		"#### Against 1 earlier run",
		"| pod-delete/good | `deleted-pod-withdrawn` | PASS → PASS | withdrawal after the deletion | 0.8s → 1.7s (75% of the headroom) | ≤ 2s | **DRIFT** |",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("markdown lacks %q:\n%s", want, stdout)
		}
	}
	// Without a baseline: the summary alone, and no file written.
	html := filepath.Join(now, "report.html")
	if err := os.Remove(html); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runMain(t, "report", now, "--markdown")
	if code != ExitFail || strings.Contains(stdout, "Against") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
	if _, err := os.Stat(html); err == nil {
		t.Error("report --markdown wrote report.html")
	}
	code, _, stderr = runMain(t, "report", now, "--baseline", prev)
	if code != ExitError || !strings.Contains(stderr, "go with --markdown") {
		t.Errorf("--baseline without --markdown: exit %d, %q", code, stderr)
	}
	code, _, stderr = runMain(t, "report", now, "--markdown", "--baseline", "/nonexistent")
	if code != ExitError || !strings.Contains(stderr, "/nonexistent") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("missing baseline: exit %d, %q", code, stderr)
	}
}
