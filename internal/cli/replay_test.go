package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

func writeReport(t *testing.T, scs ...reports.ScenarioReport) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, reports.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := reports.WriteJSON(f, &reports.Report{Started: time.Now(), Finished: time.Now(), Scenarios: scs}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// replay takes the scenario, variant and seed from the report, by file or by directory.
func TestReplayScenarios(t *testing.T) {
	dir := writeReport(t,
		reports.ScenarioReport{Name: "db-slowness", Variant: "deep-liveness", Seed: 42,
			Verdicts: []verdict.Result{{Rule: "no-liveness-restarts", Status: verdict.Fail}}},
		reports.ScenarioReport{Name: "cold-start", Variant: "good", Seed: 7,
			Verdicts: []verdict.Result{{Rule: "startup-not-killed", Status: verdict.Pass}}},
	)
	for _, path := range []string{dir, filepath.Join(dir, reports.ReportFile)} {
		scs, err := replayScenarios(path, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(scs) != 2 || scs[0].Name != "db-slowness" || scs[0].Seed != 42 || scs[0].Target.Variant != "deep-liveness" ||
			scs[1].Name != "cold-start" || scs[1].Seed != 7 {
			t.Fatalf("replay of %s = %+v, %+v", path, scs[0], scs[1])
		}
	}
	// The catalogue itself is untouched.
	again, _ := replayScenarios(dir, false)
	if again[0] == nil || again[0].File == "" {
		t.Fatalf("replayed scenario lost its file")
	}
}

func TestReplayRefusesWhatItCannotRepeat(t *testing.T) {
	unknown := writeReport(t, reports.ScenarioReport{Name: "gone", Variant: "good", Verdicts: []verdict.Result{{Rule: "x", Status: verdict.Pass}}})
	if _, err := replayScenarios(unknown, false); err == nil || !strings.Contains(err.Error(), `scenario "gone" is not in this build's catalogue`) {
		t.Errorf("unknown scenario: %v", err)
	}
	custom := writeReport(t, reports.ScenarioReport{Name: "db-slowness", Target: "target shop", Verdicts: []verdict.Result{{Rule: "x", Status: verdict.Pass}}})
	if _, err := replayScenarios(custom, false); err == nil || !strings.Contains(err.Error(), "pass the same --target file") {
		t.Errorf("custom target without --target: %v", err)
	}
	if scs, err := replayScenarios(custom, true); err != nil || scs[0].Target.Variant != "good" {
		t.Errorf("custom target with --target: %v %v", scs, err)
	}
}
