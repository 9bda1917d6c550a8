package lint

import (
	"crypto/sha256"
	"encoding/hex"
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
	// InformationURI is the project's home; rule help links into its RULES.md.
	InformationURI = "https://github.com/probegate/probegate"
	rulesDocURI    = InformationURI + "/blob/main/internal/lint/RULES.md"
)

// ruleHelpURI links to rule r's section of RULES.md.
func ruleHelpURI(r *Rule) string {
	return rulesDocURI + "#" + strings.ToLower(r.ID) + "-" + r.Name
}

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

// sarifInvocation says whether the run read all its input; bad input is a notification.
type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"` // "inSource" (annotation) or "external" (flag, config file)
	Justification string `json:"justification,omitempty"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
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
	HelpURI              string             `json:"helpUri,omitempty"`
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
	// PartialFingerprints identify the finding across runs when lines move: rule, object, container
	// and probe.
	PartialFingerprints map[string]string  `json:"partialFingerprints"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
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
// driver so code-scanning tools can show rule help; results point at the file and line, suppressed
// findings carry their suppression, and input that could not be read is an error notification of a
// failed invocation.
func WriteSARIF(w io.Writer, r *Report) error {
	rules := Rules()
	index := map[string]int{}
	driver := sarifDriver{Name: "probegate-lint", Version: r.Version, InformationURI: InformationURI, Rules: make([]sarifRule, 0, len(rules))}
	for i, rule := range rules {
		index[rule.ID] = i
		confirm := rule.HowToConfirm()
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
			HelpURI:              ruleHelpURI(rule),
			DefaultConfiguration: sarifConfiguration{Level: sarifLevel(rule.Severity)},
			Properties:           props,
		})
	}
	inv := sarifInvocation{ExecutionSuccessful: len(r.Problems) == 0}
	for _, p := range r.Problems {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
			Level: "error", Message: sarifText{p.Msg}, Locations: []sarifLocation{physical(p.Pos)},
		})
	}
	run := sarifRun{Tool: sarifTool{Driver: driver}, Invocations: []sarifInvocation{inv}, Results: []sarifResult{}}
	add := func(f Finding) {
		loc := physical(f.Pos)
		loc.LogicalLocations = []sarifLogical{{FullyQualifiedName: logicalName(f), Kind: "resource"}}
		msg := f.Object + ": " + f.Message
		if f.Fix != "" {
			msg += "\nfix: " + f.Fix
		}
		if f.Confirm != "" {
			msg += "\nconfirm: " + f.Confirm
		}
		if c := f.Confirmation; c != nil {
			msg += "\n" + c.Line()
		}
		res := sarifResult{
			RuleID:              f.RuleID,
			RuleIndex:           index[f.RuleID],
			Level:               sarifLevel(f.Severity),
			Message:             sarifText{msg},
			Locations:           []sarifLocation{loc},
			PartialFingerprints: map[string]string{"probegateFinding/v1": fingerprint(f)},
		}
		if s := f.Suppressed; s != nil {
			kind := "external"
			if s.Kind == "annotation" {
				kind = "inSource"
			}
			res.Suppressions = []sarifSuppression{{Kind: kind, Justification: strings.TrimSpace(s.Kind + ": " + s.Reason)}}
		}
		run.Results = append(run.Results, res)
	}
	for _, f := range r.Findings {
		add(f)
	}
	for _, f := range r.Suppressed {
		add(f)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}})
}

// physical is the location of pos: its file and, when known, its line.
func physical(pos Position) sarifLocation {
	loc := sarifLocation{PhysicalLocation: &sarifPhysical{ArtifactLocation: sarifArtifact{URI: sarifURI(pos.File)}}}
	if pos.Line > 0 {
		loc.PhysicalLocation.Region = &sarifRegion{StartLine: pos.Line}
	}
	return loc
}

// fingerprint identifies a finding independently of its line: the rule and what it is about.
func fingerprint(f Finding) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{f.RuleID, f.Pos.File, f.Namespace, f.Object, f.Container, f.Probe}, "\x00")))
	return hex.EncodeToString(sum[:16])
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
