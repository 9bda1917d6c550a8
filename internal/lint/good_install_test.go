package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodInstall = "testdata/good-install"

// TestGoodInstallPasses holds the bar for gating CI: an install whose probes an expert would
// call good passes with the default --fail-on warning. The same install with liveness pointed at
// readiness's endpoint must fail, so the test cannot pass by seeing nothing.
func TestGoodInstallPasses(t *testing.T) {
	inv, err := LoadPaths([]string{goodInstall}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Problems) != 0 {
		t.Fatalf("problems reading %s: %v", goodInstall, inv.Problems)
	}
	if len(inv.Workloads) != 3 || len(inv.Services) != 5 {
		t.Fatalf("read %d workloads and %d services, want 3 and 5", len(inv.Workloads), len(inv.Services))
	}
	rep := NewReport(inv, Config{}, Warning)
	for _, f := range rep.Findings {
		if f.Severity >= Warning {
			t.Errorf("%v: %s %s %s: %s", f.Pos, f.Severity, f.RuleID, f.Object, f.Message)
		}
	}
	if rep.Failed() {
		t.Error("--fail-on warning fails the good install")
	}

	dir := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(goodInstall, "*.yaml"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.Replace(string(data), "path: /livez", "path: /readyz", 1))
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inv, err = LoadPaths([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep := NewReport(inv, Config{}, Warning); !rep.Failed() || !ruleSet(rep.Findings)["PG001"] {
		t.Errorf("liveness on readiness's endpoint: failed=%v, findings %v; want a PG001 failure", rep.Failed(), ruleSet(rep.Findings))
	}
}
