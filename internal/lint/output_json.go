package lint

import (
	"encoding/json"
	"io"
)

// JSONSchemaVersion is the version of the `-o json` document; it changes when a field changes meaning
// or disappears. 2 added version, unknownKinds, errors, suppressed, and per finding probe, fix and
// suppressed; confirm became optional (only a command that can run as printed). 3: failed is also
// true when some input could not be read, and hiddenSkipped lists the hidden files a directory walk
// skipped.
const JSONSchemaVersion = 3

// jsonReport is the `-o json` document.
type jsonReport struct {
	SchemaVersion int      `json:"schemaVersion"`
	Version       string   `json:"version,omitempty"`
	FailOn        Severity `json:"failOn"`
	// Failed is true when a finding is at or above failOn, or some input could not be read.
	Failed       bool `json:"failed"`
	Workloads    int  `json:"workloads"`
	Services     int  `json:"services"`
	Skipped      int  `json:"skipped"`
	UnknownKinds int  `json:"unknownKinds"`
	// Errors is the input that could not be read (the run exits 2, but everything else is linted).
	Errors []jsonError `json:"errors"`
	// Hidden lists the hidden manifest files a directory walk skipped.
	Hidden     []Position `json:"hiddenSkipped,omitempty"`
	Findings   []Finding  `json:"findings"`
	Suppressed []Finding  `json:"suppressed"`
	Rules      []jsonRule `json:"rules"`
}

// jsonError is one piece of input lint could not read.
type jsonError struct {
	Position Position `json:"position"`
	Message  string   `json:"message"`
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
		Version:       r.Version,
		FailOn:        r.FailOn,
		Failed:        r.Failed() || len(r.Problems) > 0,
		Workloads:     r.Workloads,
		Services:      r.Services,
		Skipped:       r.Skipped,
		UnknownKinds:  r.UnknownKinds,
		Errors:        []jsonError{},
		Findings:      r.Findings,
		Suppressed:    r.Suppressed,
		Hidden:        r.Hidden,
		Rules:         []jsonRule{},
	}
	for _, p := range r.Problems {
		doc.Errors = append(doc.Errors, jsonError{p.Pos, p.Msg})
	}
	if doc.Findings == nil {
		doc.Findings = []Finding{}
	}
	if doc.Suppressed == nil {
		doc.Suppressed = []Finding{}
	}
	for _, rule := range r.firedRules() {
		doc.Rules = append(doc.Rules, jsonRule{rule.ID, rule.Name, rule.Severity, rule.Summary, rule.Explanation, rule.Fix, rule.Scenario})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}
