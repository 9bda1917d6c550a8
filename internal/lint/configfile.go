package lint

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// FileConfig is a lint config file (--config): rules to disable, with an optional reason each, and
// the limits the flags also set. Flags given on the command line win over the file.
//
//	disable:
//	  - PG007
//	  - rule: no-withdrawal-delay
//	    reason: the app drains in-process (see ADR-12)
//	failOn: error
//	maxReadinessWindow: 45s
type FileConfig struct {
	Disable            []DisabledRule `yaml:"disable"`
	FailOn             string         `yaml:"failOn"`
	MaxReadinessWindow time.Duration  `yaml:"maxReadinessWindow"`
	MaxInitialDelay    time.Duration  `yaml:"maxInitialDelay"`
	GraceMargin        time.Duration  `yaml:"graceMargin"`
	Propagation        time.Duration  `yaml:"propagation"`
	ColdStart          time.Duration  `yaml:"coldStart"`
}

// DisabledRule is one entry of a config file's disable list: a rule ID or name, alone or with a reason.
type DisabledRule struct {
	Rule   string `yaml:"rule"`
	Reason string `yaml:"reason"`
}

// UnmarshalYAML reads either "PG007" or {rule: PG007, reason: …}.
func (d *DisabledRule) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		d.Rule = n.Value
		return nil
	}
	type plain DisabledRule
	return n.Decode((*plain)(d))
}

// LoadConfigFile reads and checks a lint config file; every rule it names must exist.
func LoadConfigFile(path string) (*FileConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &InputError{Pos: Position{File: path}, Msg: fmt.Sprintf("read config: %v", unwrapPathError(err))}
	}
	var fc FileConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&fc); err != nil && err.Error() != "EOF" {
		return nil, yamlError(path, 1, err)
	}
	for i, d := range fc.Disable {
		id, ok := ruleID(d.Rule)
		if !ok {
			return nil, &InputError{Pos: Position{File: path}, Msg: fmt.Sprintf("disable[%d]: no rule %q (see probegate lint --list-rules)", i, d.Rule)}
		}
		fc.Disable[i].Rule = id
	}
	if fc.FailOn != "" {
		if _, err := ParseSeverity(fc.FailOn); err != nil {
			return nil, &InputError{Pos: Position{File: path}, Msg: "failOn: " + err.Error()}
		}
	}
	for name, d := range map[string]time.Duration{"maxReadinessWindow": fc.MaxReadinessWindow, "maxInitialDelay": fc.MaxInitialDelay,
		"graceMargin": fc.GraceMargin, "propagation": fc.Propagation, "coldStart": fc.ColdStart} {
		if d < 0 {
			return nil, &InputError{Pos: Position{File: path}, Msg: fmt.Sprintf("%s must not be negative, got %s", name, d)}
		}
	}
	return &fc, nil
}

// ParseDisable resolves a --disable value ("PG007,no-withdrawal-delay") to suppressions by rule ID.
func ParseDisable(values []string) (map[string]Suppression, error) {
	out := map[string]Suppression{}
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			id, ok := ruleID(s)
			if !ok {
				return nil, fmt.Errorf("--disable: no rule %q (see probegate lint --list-rules)", s)
			}
			out[id] = Suppression{Kind: "flag"}
		}
	}
	return out, nil
}
