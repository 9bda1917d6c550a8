package scenario

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Mutation says that running Scenario against the anti-pattern Variant must make Rule (and each of
// Also, in the same run) FAIL. A variant that passes a designated rule means the harness cannot see
// the mistake: a harness bug.
type Mutation struct {
	Variant  string     `json:"variant"`
	Scenario string     `json:"scenario"`
	Rule     string     `json:"rule"`
	Also     []AlsoRule `json:"also,omitempty"`
	Why      string     `json:"why,omitempty"`
	// Evidence is a regular expression that the designated rule's observed line or one of its
	// evidence notes must match: the row fails for the variant's own mistake (the failure class,
	// restart cause or effect named), not for any FAIL.
	Evidence string `json:"evidence"`
	// Pod "faulted" requires the matching note to name the pod the scenario's fault acted on.
	Pod  string `json:"pod,omitempty"`
	Line int    `json:"-"`
}

// AlsoRule is another rule the same run must FAIL, for the reason its own Evidence names.
type AlsoRule struct {
	Rule string `json:"rule"`
	// Evidence is a regular expression that the rule's observed line or one of its evidence notes
	// must match, as Mutation.Evidence is for the designated rule.
	Evidence string `json:"evidence"`
}

// EvidenceRE is the compiled Evidence (validated when the matrix is parsed).
func (mu Mutation) EvidenceRE() *regexp.Regexp { return regexp.MustCompile(mu.Evidence) }

// EvidenceRE is the compiled Evidence (validated when the matrix is parsed).
func (a AlsoRule) EvidenceRE() *regexp.Regexp { return regexp.MustCompile(a.Evidence) }

// Rules are the rules the row must FAIL: the designated rule, then each Also rule.
func (mu Mutation) Rules() []string {
	out := []string{mu.Rule}
	for _, a := range mu.Also {
		out = append(out, a.Rule)
	}
	return out
}

// Matrix is the mutation matrix: every anti-pattern variant with the verdicts it must fail.
type Matrix struct {
	Mutations []Mutation
}

// LoadMatrix reads dir/mutations.yaml from fsys and checks that every variant, scenario and rule it
// names exists and that each rule is expected by its scenario.
func LoadMatrix(fsys fs.FS, dir, prefix string, c *Catalogue, vocab Vocabulary) (*Matrix, error) {
	display := path.Join(prefix, MatrixFile)
	data, err := fs.ReadFile(fsys, path.Join(dir, MatrixFile))
	if err != nil {
		return nil, fmt.Errorf("read mutation matrix: %w", err)
	}
	return ParseMatrix(display, data, c, vocab)
}

// ParseMatrix decodes and validates a mutation matrix: a top-level "mutations" list of
// {variant, scenario, rule, also: [{rule, evidence}], why, evidence, pod}.
func ParseMatrix(file string, data []byte, c *Catalogue, vocab Vocabulary) (*Matrix, error) {
	r := &nodeReader{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &InvalidError{Problems: []Problem{{File: file, Line: yamlErrorLine(err), Msg: "malformed YAML: " + yamlErrorText(err)}}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &InvalidError{Problems: []Problem{{File: file, Msg: "empty file"}}}
	}
	m := &Matrix{}
	r.mapping(doc.Content[0], "", map[string]field{
		"mutations": {required: true, decode: func(n *yaml.Node, p string) {
			r.sequence(n, p, func(_ int, item *yaml.Node, p string) {
				mu := Mutation{Line: item.Line}
				var vn, sn, rn *yaml.Node
				r.mapping(item, p, map[string]field{
					"variant":  {required: true, decode: func(n *yaml.Node, p string) { vn = n; r.str(n, p, &mu.Variant) }},
					"scenario": {required: true, decode: func(n *yaml.Node, p string) { sn = n; r.str(n, p, &mu.Scenario) }},
					"rule":     {required: true, decode: func(n *yaml.Node, p string) { rn = n; r.str(n, p, &mu.Rule) }},
					"why":      {decode: func(n *yaml.Node, p string) { r.text(n, p, &mu.Why) }},
					"evidence": {required: true, decode: func(n *yaml.Node, p string) { r.regexp(n, p, &mu.Evidence) }},
					"pod": {decode: func(n *yaml.Node, p string) {
						r.str(n, p, &mu.Pod)
						if mu.Pod != "faulted" {
							r.fail(n, p, "want \"faulted\" (the matching note names the pod the fault acted on), got %q", mu.Pod)
						}
					}},
					"also": {decode: func(n *yaml.Node, p string) {
						r.sequence(n, p, func(_ int, item *yaml.Node, p string) {
							if resolve(item).Kind == yaml.ScalarNode {
								r.fail(item, p, "want {rule, evidence}: each also rule names the evidence it must FAIL with, got %s", describe(item))
								return
							}
							var a AlsoRule
							var an *yaml.Node
							r.mapping(item, p, map[string]field{
								"rule":     {required: true, decode: func(n *yaml.Node, p string) { an = n; r.str(n, p, &a.Rule) }},
								"evidence": {required: true, decode: func(n *yaml.Node, p string) { r.regexp(n, p, &a.Evidence) }},
							})
							if an != nil && a.Rule != "" && checkName(r, an, p+".rule", "verdict rule", a.Rule, vocab.Rules) && c != nil {
								if s, ok := c.Get(mu.Scenario); ok && !contains(s.Rules(), a.Rule) {
									r.fail(an, p+".rule", "scenario %s does not expect rule %q", mu.Scenario, a.Rule)
								}
							}
							mu.Also = append(mu.Also, a)
						})
					}},
				})
				if vn != nil && mu.Variant != "" {
					checkName(r, vn, p+".variant", "variant", mu.Variant, vocab.Variants)
				}
				if rn != nil && mu.Rule != "" {
					checkName(r, rn, p+".rule", "verdict rule", mu.Rule, vocab.Rules)
				}
				if sn != nil && mu.Scenario != "" && c != nil {
					s, ok := c.Get(mu.Scenario)
					switch {
					case !ok:
						r.fail(sn, p+".scenario", "unknown scenario %q (known: %s)", mu.Scenario, strings.Join(c.Names(), ", "))
					case rn != nil && !contains(s.Rules(), mu.Rule):
						r.fail(rn, p+".rule", "scenario %s does not expect rule %q (it expects: %s)", mu.Scenario, mu.Rule, strings.Join(s.Rules(), ", "))
					}
				}
				m.Mutations = append(m.Mutations, mu)
			})
		}},
	})
	if len(r.problems) > 0 {
		return nil, &InvalidError{Problems: r.problems}
	}
	return m, nil
}

// regexp decodes a string that must compile as a regular expression.
func (r *nodeReader) regexp(n *yaml.Node, path string, out *string) {
	r.str(n, path, out)
	if _, err := regexp.Compile(*out); err != nil {
		r.fail(n, path, "not a regular expression: %v", err)
	}
}

// Variants returns the distinct variants of the matrix, sorted.
func (m *Matrix) Variants() []string {
	seen := map[string]bool{}
	var out []string
	for _, mu := range m.Mutations {
		if !seen[mu.Variant] {
			seen[mu.Variant] = true
			out = append(out, mu.Variant)
		}
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
