package lint

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the current output")

// golden compares got with the golden file at path, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("update golden %s: %v", path, err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden %s (run go test -run %s -update to create it): %v", path, t.Name(), err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// ruleConfigs holds the limits a rule's test cases need beyond the defaults.
var ruleConfigs = map[string]Config{
	"startup-budget-below-cold-start": {ColdStart: 40 * time.Second, ColdStartSource: "--cold-start 40s"},
}

func lintFile(t *testing.T, path string, cfg Config) (*Inventory, []Finding) {
	t.Helper()
	inv, err := LoadPaths([]string{path}, nil)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return inv, Lint(inv, cfg)
}

func only(fs []Finding, ruleID string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.RuleID == ruleID {
			out = append(out, f)
		}
	}
	return out
}

func textOf(t *testing.T, inv *Inventory, fs []Finding) []byte {
	t.Helper()
	var buf bytes.Buffer
	rep := &Report{Findings: fs, Workloads: len(inv.Workloads), Services: len(inv.Services), Skipped: len(inv.Skipped), FailOn: Warning}
	if err := WriteText(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestRuleGolden runs every rule on its two manifests in testdata/rules/<rule name>/: trigger.yaml
// must produce at least one finding of that rule, printed as in trigger.golden; clean.yaml (the
// near miss) must produce no finding of any rule.
func TestRuleGolden(t *testing.T) {
	for _, r := range Rules() {
		t.Run(r.Name, func(t *testing.T) {
			dir := filepath.Join("testdata", "rules", r.Name)
			cfg := ruleConfigs[r.Name]

			inv, fs := lintFile(t, filepath.Join(dir, "trigger.yaml"), cfg)
			mine := only(fs, r.ID)
			if len(mine) == 0 {
				t.Fatalf("trigger.yaml produced no %s finding; all findings:\n%s", r.ID, textOf(t, inv, fs))
			}
			for _, f := range mine {
				if f.Pos.Line <= 0 {
					t.Errorf("finding without a line: %+v", f)
				}
				if f.Fix == "" {
					t.Errorf("finding without a fix: %+v", f)
				}
				if f.Confirm != "" {
					t.Errorf("confirm command %q for a third-party manifest (no --target, no fixture variant)", f.Confirm)
				}
			}
			golden(t, filepath.Join(dir, "trigger.golden"), textOf(t, inv, mine))

			inv, fs = lintFile(t, filepath.Join(dir, "clean.yaml"), cfg)
			if len(fs) != 0 {
				t.Errorf("clean.yaml produced findings:\n%s", textOf(t, inv, fs))
			}
		})
	}
}

// TestRulesDocumented checks every rule carries what its findings and --explain print.
func TestRulesDocumented(t *testing.T) {
	if len(Rules()) < 13 {
		t.Fatalf("only %d rules registered", len(Rules()))
	}
	for _, r := range Rules() {
		if r.ID == "" || r.Name == "" || r.Summary == "" || r.Explanation == "" || r.Fix == "" || r.Check == nil {
			t.Errorf("rule %q (%s) is missing a field", r.ID, r.Name)
		}
		if r.Scenario == "" && r.ConfirmNote == "" {
			t.Errorf("rule %s names no confirming scenario and no confirm note", r.ID)
		}
		if r.Scenario != "" {
			if _, err := os.Stat(filepath.Join("..", "..", "scenarios", r.Scenario+".yaml")); err != nil {
				t.Errorf("rule %s confirms with scenario %q, which the catalogue lacks: %v", r.ID, r.Scenario, err)
			}
		}
		if _, err := os.Stat(filepath.Join("testdata", "rules", r.Name)); err != nil {
			t.Errorf("rule %s has no golden test directory: %v", r.ID, err)
		}
	}
}
