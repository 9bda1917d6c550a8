package cli

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/reports/reportstest"
)

// savedRun writes a synthetic run's report directory, after edit has shaped the report.
func savedRun(t *testing.T, edit func(r *reports.Report)) string {
	t.Helper()
	r := reportstest.SampleReport(5)
	edit(r)
	dir := t.TempDir()
	if err := reports.WriteAll(dir, r); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReportExitCodesFollowVerdicts(t *testing.T) {
	passing := savedRun(t, func(r *reports.Report) { r.Scenarios = r.Scenarios[1:] }) // pod-delete only
	failing := savedRun(t, func(*reports.Report) {})
	errored := savedRun(t, func(r *reports.Report) {
		r.Scenarios[1].Error = "deploy target into pg-x: rollout timed out"
		r.Scenarios[1].Verdicts = nil
	})
	cases := []struct {
		name, dir  string
		code       int
		final      string
		stderrWant string
	}{
		{"all pass", passing, ExitOK, "1 scenario: 1 passed, 0 failed", ""},
		{"a verdict fails", failing, ExitFail, "2 scenarios: 1 passed, 1 failed", ""},
		{"a scenario errored", errored, ExitError, "2 scenarios: 0 passed, 1 failed, 1 errored",
			"probegate: scenario pod-delete could not run: deploy target into pg-x: rollout timed out\n"},
		{"report.json path", filepath.Join(passing, "report.json"), ExitOK, "1 scenario: 1 passed, 0 failed", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.dir
			if filepath.Base(dir) == "report.json" {
				dir = filepath.Dir(dir)
			}
			for _, f := range []string{"junit.xml", "report.html"} {
				if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
			code, stdout, stderr := runMain(t, "report", c.dir)
			if code != c.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, c.code, stderr)
			}
			if !strings.Contains(stdout, c.final+"\n") {
				t.Errorf("stdout lacks the final line %q:\n%s", c.final, stdout)
			}
			if strings.Contains(stdout, "\x1b[") {
				t.Error("colour codes written to a file")
			}
			if stderr != c.stderrWant {
				t.Errorf("stderr = %q, want %q", stderr, c.stderrWant)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
			if err != nil {
				t.Fatalf("junit.xml not re-rendered: %v", err)
			}
			var suites struct {
				Failures int `xml:"failures,attr"`
				Errors   int `xml:"errors,attr"`
			}
			if err := xml.Unmarshal(raw, &suites); err != nil {
				t.Fatalf("junit.xml: %v", err)
			}
			if c.code == ExitOK && suites.Failures+suites.Errors > 0 || c.code == ExitFail && suites.Failures == 0 || c.code == ExitError && suites.Errors == 0 {
				t.Errorf("junit.xml failures %d errors %d do not match exit %d", suites.Failures, suites.Errors, c.code)
			}
			if html, err := os.ReadFile(filepath.Join(dir, "report.html")); err != nil || !strings.Contains(string(html), `<svg class="timeline"`) {
				t.Errorf("report.html not re-rendered with a timeline: %v", err)
			}
		})
	}
}

func TestReportBadDirectoryExitsTwoWithOneLine(t *testing.T) {
	empty := t.TempDir()
	corrupt := t.TempDir()
	if err := os.WriteFile(filepath.Join(corrupt, "report.json"), []byte(`{"schemaVersion": 1, "scenarios": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	brokenTimeline := savedRun(t, func(*reports.Report) {})
	if err := os.WriteFile(filepath.Join(brokenTimeline, "scenarios/pod-delete-good/timeline.jsonl"), []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := t.TempDir()
	if err := os.WriteFile(filepath.Join(future, "report.json"), []byte(`{"schemaVersion": 7, "scenarios": [{"name": "x", "verdicts": []}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing dir", []string{"report", "/nonexistent/run-1"}, "probegate: report directory /nonexistent/run-1 does not exist"},
		{"not a report dir", []string{"report", empty}, "probegate: " + empty + " has no report.json"},
		{"corrupt report.json", []string{"report", corrupt}, "probegate: " + filepath.Join(corrupt, "report.json") + ": decode report"},
		{"corrupt timeline", []string{"report", brokenTimeline}, `probegate: scenario "pod-delete": scenarios/pod-delete-good/timeline.jsonl: timeline line 1`},
		{"newer schema", []string{"report", future}, "probegate: " + filepath.Join(future, "report.json") + ": schemaVersion 7 is newer"},
		{"no argument", []string{"report"}, "probegate: accepts 1 arg(s), received 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, c.args...)
			if code != ExitError {
				t.Errorf("exit %d, want %d", code, ExitError)
			}
			if !strings.HasPrefix(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr\n got %q\nwant one line starting %q", stderr, c.want)
			}
			if stdout != "" {
				t.Errorf("stdout not empty: %q", stdout)
			}
		})
	}
	// Nothing was half-written into the bad directories.
	for _, dir := range []string{empty, corrupt} {
		if _, err := os.Stat(filepath.Join(dir, "report.html")); err == nil {
			t.Errorf("report.html written into %s", dir)
		}
	}
}

// Problem 1 of issue 11: a scenario whose verdicts could not be shown used to count as passed and
// exit 0; now it is INCONCLUSIVE and exits 3, in the terminal, junit.xml and report.html alike.
func TestReportExitInconclusive(t *testing.T) {
	dir := savedRun(t, func(r *reports.Report) {
		r.Scenarios = r.Scenarios[:1]
		for i := range r.Scenarios[0].Verdicts {
			r.Scenarios[0].Verdicts[i].Status = verdict.Pass
		}
		v := &r.Scenarios[0].Verdicts[0]
		v.Status, v.At = verdict.Inconclusive, nil
		v.Unshown = []string{"db-latency was skipped: no toxiproxy in front of the target's database"}
	})
	code, stdout, _ := runMain(t, "report", dir)
	if code != ExitInconclusive || !strings.Contains(stdout, "1 scenario: 0 passed, 0 failed, 1 inconclusive") ||
		!strings.Contains(stdout, "could not show: db-latency was skipped") {
		t.Errorf("exit %d, stdout:\n%s", code, stdout)
	}
	for _, f := range []string{"junit.xml", "report.html"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "db-latency was skipped") {
			t.Errorf("%s does not name the skipped fault", f)
		}
	}
}
