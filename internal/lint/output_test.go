package lint

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func mixedReport(t *testing.T) *Report {
	t.Helper()
	inv, err := LoadPaths([]string{filepath.Join("testdata", "output", "mixed.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return NewReport(inv, Config{}, Warning)
}

// TestOutputGolden pins the three output formats on one manifest with several findings.
func TestOutputGolden(t *testing.T) {
	rep := mixedReport(t)
	if len(rep.Findings) < 5 || !rep.Failed() {
		t.Fatalf("mixed.yaml: %d findings, failed=%v; want several and a failure", len(rep.Findings), rep.Failed())
	}
	for _, f := range []struct {
		ext   string
		write func(*bytes.Buffer, *Report) error
	}{
		{"txt", func(b *bytes.Buffer, r *Report) error { return WriteText(b, r) }},
		{"json", func(b *bytes.Buffer, r *Report) error { return WriteJSON(b, r) }},
		{"sarif", func(b *bytes.Buffer, r *Report) error { return WriteSARIF(b, r) }},
	} {
		var buf bytes.Buffer
		if err := f.write(&buf, rep); err != nil {
			t.Fatal(err)
		}
		golden(t, filepath.Join("testdata", "output", "mixed."+f.ext), buf.Bytes())
	}
}

// TestJSONRoundTrip: the JSON document carries every finding with its position and confirm line.
func TestJSONRoundTrip(t *testing.T) {
	rep := mixedReport(t)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SchemaVersion int       `json:"schemaVersion"`
		Failed        bool      `json:"failed"`
		FailOn        Severity  `json:"failOn"`
		Findings      []Finding `json:"findings"`
		Rules         []struct {
			ID string `json:"id"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != JSONSchemaVersion || !doc.Failed || doc.FailOn != Warning {
		t.Errorf("header = %+v", doc)
	}
	if len(doc.Findings) != len(rep.Findings) {
		t.Fatalf("%d findings in JSON, %d in report", len(doc.Findings), len(rep.Findings))
	}
	for i, f := range doc.Findings {
		if f != rep.Findings[i] {
			t.Errorf("finding %d changed in JSON: %+v vs %+v", i, f, rep.Findings[i])
		}
	}
	if len(doc.Rules) != len(rep.firedRules()) {
		t.Errorf("%d rules documented, %d fired", len(doc.Rules), len(rep.firedRules()))
	}
}

// TestSARIFStructure checks what SARIF 2.1.0 requires of the properties probegate writes: version,
// runs[].tool.driver.name, results with message.text, ruleId/ruleIndex pointing at the driver's rule,
// a valid level, and 1-based regions on relative artifact URIs.
func TestSARIFStructure(t *testing.T) {
	rep := mixedReport(t)
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var log map[string]any
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log["version"] != "2.1.0" || !strings.Contains(log["$schema"].(string), "sarif-schema-2.1.0") {
		t.Fatalf("version %v, $schema %v", log["version"], log["$schema"])
	}
	runs := log["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	run := runs[0].(map[string]any)
	driver := run["tool"].(map[string]any)["driver"].(map[string]any)
	if driver["name"] == "" {
		t.Error("driver has no name")
	}
	rules := driver["rules"].([]any)
	if len(rules) != len(Rules()) {
		t.Errorf("%d driver rules, want %d", len(rules), len(Rules()))
	}
	for _, r := range rules {
		rm := r.(map[string]any)
		for _, k := range []string{"id", "shortDescription", "fullDescription", "help", "defaultConfiguration"} {
			if rm[k] == nil {
				t.Errorf("rule %v lacks %s", rm["id"], k)
			}
		}
	}
	results := run["results"].([]any)
	if len(results) != len(rep.Findings) {
		t.Fatalf("%d results, %d findings", len(results), len(rep.Findings))
	}
	for i, r := range results {
		res := r.(map[string]any)
		idx := int(res["ruleIndex"].(float64))
		if rules[idx].(map[string]any)["id"] != res["ruleId"] {
			t.Errorf("result %d: ruleIndex %d is %v, ruleId %v", i, idx, rules[idx].(map[string]any)["id"], res["ruleId"])
		}
		switch res["level"] {
		case "error", "warning", "note":
		default:
			t.Errorf("result %d: level %v", i, res["level"])
		}
		if res["message"].(map[string]any)["text"] == "" {
			t.Errorf("result %d: empty message", i)
		}
		loc := res["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)
		uri := loc["artifactLocation"].(map[string]any)["uri"].(string)
		if uri != "testdata/output/mixed.yaml" {
			t.Errorf("result %d: uri %q", i, uri)
		}
		if line := loc["region"].(map[string]any)["startLine"].(float64); line < 1 {
			t.Errorf("result %d: startLine %v", i, line)
		}
	}
}

func TestFailOnThreshold(t *testing.T) {
	rep := mixedReport(t)
	counts := map[Severity]int{}
	for _, f := range rep.Findings {
		counts[f.Severity]++
	}
	if counts[Error] == 0 || counts[Warning] == 0 {
		t.Fatalf("mixed.yaml should have errors and warnings: %v", counts)
	}
	for _, c := range []struct {
		failOn Severity
		want   bool
	}{{Info, true}, {Warning, true}, {Error, true}, {SeverityNone, false}} {
		rep.FailOn = c.failOn
		if rep.Failed() != c.want {
			t.Errorf("fail-on %s: failed=%v, want %v", c.failOn, rep.Failed(), c.want)
		}
	}
	rep.Findings = only(rep.Findings, "PG013") // warnings only
	rep.FailOn = Error
	if rep.Failed() {
		t.Error("warnings only, fail-on error: failed")
	}
}
