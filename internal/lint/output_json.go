package lint

import (
	"encoding/json"
	"io"
)

// JSONSchemaVersion is the version of the `-o json` document; it changes when a field changes meaning
// or disappears.
const JSONSchemaVersion = 1

// jsonReport is the `-o json` document.
type jsonReport struct {
	SchemaVersion int        `json:"schemaVersion"`
	FailOn        Severity   `json:"failOn"`
	Failed        bool       `json:"failed"`
	Workloads     int        `json:"workloads"`
	Services      int        `json:"services"`
	Skipped       int        `json:"skipped"`
	Findings      []Finding  `json:"findings"`
	Rules         []jsonRule `json:"rules"`
}

// jsonRule documents each rule that has findings.
type jsonRule struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Severity    Severity `json:"severity"`
	Summary     string   `json:"summary"`
	Explanation string   `json:"explanation"`
	Fix         string   `json:"fix"`
	Scenario    string   `json:"scenario,omitempty"`
}

// WriteJSON writes the report as one indented JSON document.
func WriteJSON(w io.Writer, r *Report) error {
	doc := jsonReport{
		SchemaVersion: JSONSchemaVersion,
		FailOn:        r.FailOn,
		Failed:        r.Failed(),
		Workloads:     r.Workloads,
		Services:      r.Services,
		Skipped:       r.Skipped,
		Findings:      r.Findings,
		Rules:         []jsonRule{},
	}
	if doc.Findings == nil {
		doc.Findings = []Finding{}
	}
	for _, rule := range r.firedRules() {
		doc.Rules = append(doc.Rules, jsonRule{rule.ID, rule.Name, rule.Severity, rule.Summary, rule.Explanation, rule.Fix, rule.Scenario})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}
