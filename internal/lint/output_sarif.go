package lint

import (
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"strings"
)

// SARIF 2.1.0 (OASIS): the subset code-scanning tools read.
const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string             `json:"id"`
	Name                 string             `json:"name"`
	ShortDescription     sarifText          `json:"shortDescription"`
	FullDescription      sarifText          `json:"fullDescription"`
	Help                 sarifText          `json:"help"`
	DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
	Properties           map[string]string  `json:"properties,omitempty"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifLogical struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// sarifLevel maps a severity to SARIF's result levels.
func sarifLevel(s Severity) string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

// WriteSARIF writes the report as a SARIF 2.1.0 log with one run. Every rule is listed in the
// driver so code-scanning tools can show rule help; results point at the file and line.
func WriteSARIF(w io.Writer, r *Report) error {
	rules := Rules()
	index := map[string]int{}
	driver := sarifDriver{Name: "probegate-lint", Rules: make([]sarifRule, 0, len(rules))}
	for i, rule := range rules {
		index[rule.ID] = i
		confirm := rule.ConfirmNote
		if rule.Scenario != "" {
			confirm = "probegate run --scenario " + rule.Scenario + " --target <target file>"
		}
		props := map[string]string{}
		if rule.Scenario != "" {
			props["scenario"] = rule.Scenario
		}
		driver.Rules = append(driver.Rules, sarifRule{
			ID:                   rule.ID,
			Name:                 rule.Name,
			ShortDescription:     sarifText{rule.Summary},
			FullDescription:      sarifText{rule.Explanation},
			Help:                 sarifText{"Fix: " + rule.Fix + "\nConfirm: " + confirm},
			DefaultConfiguration: sarifConfiguration{Level: sarifLevel(rule.Severity)},
			Properties:           props,
		})
	}
	run := sarifRun{Tool: sarifTool{Driver: driver}, Results: []sarifResult{}}
	for _, f := range r.Findings {
		loc := sarifLocation{
			PhysicalLocation: &sarifPhysical{ArtifactLocation: sarifArtifact{URI: sarifURI(f.Pos.File)}},
			LogicalLocations: []sarifLogical{{FullyQualifiedName: logicalName(f), Kind: "resource"}},
		}
		if f.Pos.Line > 0 {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Pos.Line}
		}
		msg := f.Object + ": " + f.Message
		if f.Confirm != "" {
			msg += "\nconfirm: " + f.Confirm
		}
		run.Results = append(run.Results, sarifResult{
			RuleID:    f.RuleID,
			RuleIndex: index[f.RuleID],
			Level:     sarifLevel(f.Severity),
			Message:   sarifText{msg},
			Locations: []sarifLocation{loc},
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}})
}

// sarifURI turns a file path into a relative URI reference with forward slashes.
func sarifURI(file string) string {
	u := strings.TrimPrefix(filepath.ToSlash(file), "./")
	return (&url.URL{Path: u}).String()
}

func logicalName(f Finding) string {
	name := f.Object
	if f.Namespace != "" {
		name = f.Namespace + "/" + name
	}
	if f.Container != "" {
		name += "/" + f.Container
	}
	return name
}
