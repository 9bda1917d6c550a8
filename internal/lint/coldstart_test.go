package lint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// writeReport saves a report.json built from the reports package's own types, so lint reads what
// `probegate run` writes.
func writeReport(t *testing.T, rep reports.Report) string {
	t.Helper()
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestColdStartFromReport(t *testing.T) {
	p := writeReport(t, reports.Report{
		SchemaVersion: reports.SchemaVersion,
		Scenarios: []reports.ScenarioReport{
			{Name: "db-slowness", Verdicts: []verdict.Result{{Rule: "no-liveness-restarts", Status: verdict.Pass}}},
			{Name: "cold-start", Verdicts: []verdict.Result{
				{Rule: "startup-not-killed", Status: verdict.Pass, Figures: map[string]float64{"slowest_bootstrap_s": 41.23, "pods_ready": 3}},
			}},
			{Name: "rolling-update-under-load", Verdicts: []verdict.Result{
				{Rule: "startup-not-killed", Status: verdict.Pass, Figures: map[string]float64{"slowest_bootstrap_s": 12}},
			}},
		},
	})
	d, src, err := ColdStartFromReport(p)
	if err != nil {
		t.Fatal(err)
	}
	if d != 41200*time.Millisecond {
		t.Errorf("cold start %v, want 41.2s (the slowest)", d)
	}
	if !strings.Contains(src, "cold-start") || !strings.Contains(src, p) {
		t.Errorf("source %q does not name the scenario and file", src)
	}

	// The measured figure drives PG004.
	inv, err := LoadPaths([]string{filepath.Join("testdata", "rules", "startup-budget-below-cold-start", "clean.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fs := only(Lint(inv, Config{ColdStart: d, ColdStartSource: src}), "PG004"); len(fs) != 0 {
		t.Errorf("60s budget against 41.2s: %v", fs)
	}
	if fs := only(Lint(inv, Config{ColdStart: 70 * time.Second}), "PG004"); len(fs) != 1 {
		t.Errorf("60s budget against 70s: %d findings, want 1", len(fs))
	}
}

func TestColdStartFromReportBadInput(t *testing.T) {
	none := writeReport(t, reports.Report{SchemaVersion: reports.SchemaVersion, Scenarios: []reports.ScenarioReport{{Name: "db-slowness"}}})
	garbage := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(garbage, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.json")
	if err := os.WriteFile(other, []byte(`{"findings": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{none, garbage, other, filepath.Join(t.TempDir(), "missing.json")} {
		_, _, err := ColdStartFromReport(p)
		if err == nil || !IsInputError(err) || !strings.HasPrefix(err.Error(), p+": ") {
			t.Errorf("%s: error %v, want an InputError naming the file", p, err)
		}
	}
}
