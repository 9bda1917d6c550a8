package scenario

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// MatrixFile is the mutation matrix's file name inside a catalogue directory; it is not a scenario.
const MatrixFile = "mutations.yaml"

// Catalogue is a set of scenarios, sorted by name.
type Catalogue struct {
	Scenarios []*Scenario
}

// LoadFile reads and validates one scenario file.
func LoadFile(file string, vocab Vocabulary) (*Scenario, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	return Parse(file, data, vocab)
}

// LoadCatalogue reads every *.yaml file of fsys's directory dir (except the mutation matrix) as a
// scenario. Each scenario's name must match its file name. All problems of all files are reported
// together in one *InvalidError; display names files as prefix/<file>.
func LoadCatalogue(fsys fs.FS, dir, prefix string, vocab Vocabulary) (*Catalogue, error) {
	files, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list scenarios: %w", err)
	}
	sort.Strings(files)
	var all []Problem
	c := &Catalogue{}
	for _, f := range files {
		base := path.Base(f)
		if base == MatrixFile {
			continue
		}
		display := filepath.Join(prefix, base)
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("read scenario %s: %w", display, err)
		}
		s, err := Parse(display, data, vocab)
		if err != nil {
			if ie, ok := err.(*InvalidError); ok {
				all = append(all, ie.Problems...)
				continue
			}
			return nil, err
		}
		if want := strings.TrimSuffix(base, ".yaml"); s.Name != want {
			all = append(all, Problem{File: display, Line: 1, Path: "name",
				Msg: fmt.Sprintf("is %q but the file is %s: name a scenario after its file", s.Name, base)})
			continue
		}
		c.Scenarios = append(c.Scenarios, s)
	}
	if len(all) > 0 {
		return nil, &InvalidError{Problems: all}
	}
	if len(c.Scenarios) == 0 {
		return nil, fmt.Errorf("no scenarios in %s", prefix)
	}
	return c, nil
}

// Names returns the scenario names in order.
func (c *Catalogue) Names() []string {
	out := make([]string, 0, len(c.Scenarios))
	for _, s := range c.Scenarios {
		out = append(out, s.Name)
	}
	return out
}

// Get returns the scenario called name.
func (c *Catalogue) Get(name string) (*Scenario, bool) {
	for _, s := range c.Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// Select resolves names (scenario names, or paths of scenario files ending in .yaml) to scenarios.
// No names selects the whole catalogue. An unknown name is an error listing the known ones.
func (c *Catalogue) Select(names []string, vocab Vocabulary) ([]*Scenario, error) {
	if len(names) == 0 {
		return append([]*Scenario(nil), c.Scenarios...), nil
	}
	var out []*Scenario
	seen := map[string]bool{}
	for _, n := range names {
		var s *Scenario
		if strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") {
			var err error
			if s, err = LoadFile(n, vocab); err != nil {
				return nil, err
			}
		} else {
			var ok bool
			if s, ok = c.Get(n); !ok {
				return nil, fmt.Errorf("unknown scenario %q (known: %s)", n, strings.Join(c.Names(), ", "))
			}
		}
		if seen[s.Name] {
			continue
		}
		seen[s.Name] = true
		out = append(out, s)
	}
	return out, nil
}
