package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// nightly saves a run whose pod-delete scenario's withdrawal reading has the given value against
// its 2 s bound, and whose failing db-slow scenario stays as the sample has it.
func nightly(t *testing.T, withdrawal float64, status verdict.Status) string {
	return savedRun(t, func(r *reports.Report) {
		v := &r.Scenarios[1].Verdicts[0]
		v.Status = status
		v.Measure.Value = withdrawal
	})
}

func TestCompareExitCodes(t *testing.T) {
	steady := nightly(t, 0.8, verdict.Pass)
	same := nightly(t, 0.9, verdict.Pass)
	slower := nightly(t, 1.7, verdict.Pass) // 0.9 s of the 1.2 s headroom gone
	failing := nightly(t, 2.4, verdict.Fail)
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no regression", []string{"compare", steady, same}, ExitOK, []string{"no regression across 2 scenarios"}},
		{"drift", []string{"compare", steady, slower}, ExitRegression, []string{"0.8s → 1.7s", "+0.9s, 75% of the headroom", "DRIFT"}},
		{"drift under a looser threshold", []string{"compare", steady, slower, "--threshold", "80"}, ExitOK, []string{"+0.9s, 75% of the headroom"}},
		{"new fail", []string{"compare", steady, failing}, ExitRegression, []string{"PASS → FAIL", "NEW FAIL"}},
		{"trend, report.json paths", []string{"compare", filepath.Join(steady, "report.json"), same, slower}, ExitRegression,
			[]string{"0.8s → 0.9s → 1.7s"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, stdout, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
}

func TestCompareJSONAndHTML(t *testing.T) {
	old, new := nightly(t, 0.8, verdict.Pass), nightly(t, 1.7, verdict.Pass)
	page := filepath.Join(t.TempDir(), "compare.html")
	code, stdout, stderr := runMain(t, "compare", old, new, "--json", "--html", page)
	if code != ExitRegression {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Runs        []string `json:"runs"`
		Regressions int      `json:"regressions"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || doc.Regressions != 1 || len(doc.Runs) != 2 {
		t.Errorf("json %+v (%v):\n%s", doc, err, stdout)
	}
	b, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("html page: %v", err)
	}
}

func TestCompareBadInputExitsTwoWithOneLine(t *testing.T) {
	good := nightly(t, 0.8, verdict.Pass)
	future := t.TempDir()
	if err := os.WriteFile(filepath.Join(future, "report.json"), []byte(`{"schemaVersion": 99, "scenarios": [{"name": "x", "verdicts": []}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	notReport := filepath.Join(t.TempDir(), "junit.json")
	if err := os.WriteFile(notReport, []byte(`{"testsuites": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"one argument", []string{"compare", good}, "probegate: compare needs an OLD and a NEW run"},
		{"missing", []string{"compare", good, "/nonexistent/run"}, "probegate: /nonexistent/run: no such file or directory"},
		{"empty directory", []string{"compare", t.TempDir(), good}, "report.json: no such file or directory"},
		{"not a report", []string{"compare", good, notReport}, "probegate: " + notReport + ": decode report"},
		{"schema too new", []string{"compare", good, future}, "schemaVersion 99 is newer than this probegate understands"},
		{"bad threshold", []string{"compare", good, good, "--threshold", "lots"}, `probegate: threshold "lots"`},
		{"threshold of no rule", []string{"compare", good, good, "--threshold", "recovery=50"}, `no rule "recovery"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, c.args...)
			if code != ExitError {
				t.Errorf("exit %d, want %d", code, ExitError)
			}
			if !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr\n got %q\nwant one line containing %q", stderr, c.want)
			}
			if stdout != "" {
				t.Errorf("stdout not empty: %q", stdout)
			}
		})
	}
}
