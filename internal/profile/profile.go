// Package profile names a set of scenarios and a time budget for a run: a pre-release gate ("the
// scenarios that matter, in ten minutes") or a nightly job (the whole catalogue). A profile is a
// built-in name or a YAML file; it is resolved against the catalogue without touching a cluster.
package profile

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/probegate/probegate/internal/scenario"
)

// Profile is a named set of scenarios with a time budget.
type Profile struct {
	Name string
	// Scenarios are catalogue scenario names or labels, in order; none means the whole catalogue.
	Scenarios []string
	// Budget is the most wall time the chosen scenarios may take.
	Budget time.Duration
	// File is where the profile was read from ("" for a built-in).
	File string
}

// builtins are the profiles every probegate carries.
var builtins = []Profile{
	{
		Name: "gate",
		// What a release must not break, on one node: rollouts and cold starts, deletions and
		// evictions with their drain, and readiness withdrawing (and returning) under a fault: the
		// catalogue's rollout, deletion and readiness labels but for the multi-node scenarios.
		Scenarios: []string{"rolling-update-under-load", "cold-start",
			"pod-delete-under-load", "long-request-drain", "drain-exceeds-grace", "eviction-under-load",
			"db-slowness", "db-outage", "flapping-dependency", "event-loop-stall", "overload"},
		Budget: 10 * time.Minute,
	},
	{
		Name:   "nightly",
		Budget: 30 * time.Minute,
	},
}

// Names lists the built-in profiles.
func Names() []string {
	out := make([]string, 0, len(builtins))
	for _, p := range builtins {
		out = append(out, p.Name)
	}
	return out
}

// Builtin returns the built-in profile name.
func Builtin(name string) (Profile, bool) {
	for _, p := range builtins {
		if p.Name == name {
			p.Scenarios = slices.Clone(p.Scenarios)
			return p, true
		}
	}
	return Profile{}, false
}

// IsFile reports whether --profile's value names a file rather than a built-in profile.
func IsFile(arg string) bool {
	return strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") || strings.ContainsRune(arg, os.PathSeparator)
}

// Load returns the profile arg names: a built-in profile, or a profile file (a path, or a name
// ending in .yaml). An unknown name is an error listing the known ones.
func Load(arg string) (Profile, error) {
	if IsFile(arg) {
		data, err := os.ReadFile(arg)
		if err != nil {
			return Profile{}, fmt.Errorf("read profile: %w", err)
		}
		return Parse(arg, data)
	}
	if p, ok := Builtin(arg); ok {
		return p, nil
	}
	return Profile{}, fmt.Errorf("unknown profile %q (known: %s; or a profile file ending in .yaml)", arg, strings.Join(Names(), ", "))
}

// file is a profile file's fields.
type file struct {
	Name      string   `yaml:"name"`
	Scenarios []string `yaml:"scenarios"`
	Budget    string   `yaml:"budget"`
}

// Parse decodes a profile file (name: the file, in errors): name, scenarios (names or labels)
// and budget (a Go duration) are required; unknown fields are errors.
func Parse(name string, data []byte) (Profile, error) {
	var f file
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return Profile{}, fmt.Errorf("profile %s: %s", name, oneLine(err))
	}
	p := Profile{Name: f.Name, Scenarios: f.Scenarios, File: name}
	switch {
	case f.Name == "":
		return Profile{}, fmt.Errorf("profile %s: name: missing", name)
	case len(f.Scenarios) == 0:
		return Profile{}, fmt.Errorf("profile %s: scenarios: missing (scenario names or labels)", name)
	case f.Budget == "":
		return Profile{}, fmt.Errorf("profile %s: budget: missing (a duration such as 10m)", name)
	}
	b, err := time.ParseDuration(f.Budget)
	if err != nil || b <= 0 {
		return Profile{}, fmt.Errorf("profile %s: budget: want a positive duration such as 10m, got %q", name, f.Budget)
	}
	p.Budget = b
	for i, s := range p.Scenarios {
		if strings.TrimSpace(s) == "" {
			return Profile{}, fmt.Errorf("profile %s: scenarios[%d]: empty", name, i)
		}
	}
	return p, nil
}

// unknownField is the decoder's words for a field a profile does not have.
var unknownField = regexp.MustCompile(`field (\S+) not found in type \S+`)

// oneLine is a YAML decoding error on one line.
func oneLine(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	s = strings.TrimPrefix(s, "unmarshal errors:\n")
	s = unknownField.ReplaceAllString(s, "unknown field $1 (known: name, scenarios, budget)")
	return strings.Join(strings.Fields(s), " ")
}

// Select resolves the profile's entries against the catalogue, in catalogue order: each entry is
// a scenario name, else a label naming every scenario that carries it. An entry that is neither
// is an error listing the known labels.
func (p Profile) Select(cat *scenario.Catalogue) ([]*scenario.Scenario, error) {
	if len(p.Scenarios) == 0 {
		return slices.Clone(cat.Scenarios), nil
	}
	chosen := map[string]bool{}
	for _, e := range p.Scenarios {
		if _, ok := cat.Get(e); ok {
			chosen[e] = true
			continue
		}
		found := false
		for _, sc := range cat.Scenarios {
			if sc.HasLabel(e) {
				chosen[sc.Name], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("profile %s: %q is neither a scenario nor a label (labels: %s; probegate list names the scenarios)",
				p.Name, e, strings.Join(Labels(cat), ", "))
		}
	}
	var out []*scenario.Scenario
	for _, sc := range cat.Scenarios {
		if chosen[sc.Name] {
			out = append(out, sc)
		}
	}
	return out, nil
}

// Labels lists every label of the catalogue's scenarios, sorted.
func Labels(cat *scenario.Catalogue) []string {
	var out []string
	for _, sc := range cat.Scenarios {
		for _, l := range sc.Labels {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	sort.Strings(out)
	return out
}
