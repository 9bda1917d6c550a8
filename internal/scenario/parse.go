package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Vocabulary is the set of names scenario files may use. A nil list is not checked; the CLI and the
// suite fill it from the fault, verdict and fixture registries.
type Vocabulary struct {
	Faults   []string
	Rules    []string
	Variants []string
	// RuleParams and FaultParams, when set, check an expectation's or a fault's parameters
	// (unknown parameter, wrong kind of value); their error is reported at the params line.
	RuleParams  func(rule string, params map[string]string) error
	FaultParams func(faultType string, params map[string]string) error
	// Tolerances, when set, names the parameters among params that loosen the rule's bound by hand
	// (set to a non-zero value): an expectation that sets one must give its reason in "tolerance".
	Tolerances func(rule string, params map[string]string) []string
	// OracleParams, when set, checks the scenario's oracle options.
	OracleParams func(params map[string]string) error
	// Defaults are rules every scenario is judged by: appended to its expect list unless listed.
	Defaults []string
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// maxNameLen keeps "<name>-<suffix>" a valid namespace name.
const maxNameLen = 40

// Parse decodes and validates one scenario file. file is only used in error messages. Every problem
// is reported, each with its line and field path; the error is an *InvalidError.
func Parse(file string, data []byte, vocab Vocabulary) (*Scenario, error) {
	r := &nodeReader{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &InvalidError{Problems: []Problem{{File: file, Line: yamlErrorLine(err), Msg: "malformed YAML: " + yamlErrorText(err)}}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &InvalidError{Problems: []Problem{{File: file, Msg: "empty file"}}}
	}
	s := &Scenario{
		File:     file,
		Seed:     DefaultSeed,
		Parallel: true,
		Settle:   DefaultSettle,
		Target:   Target{Variant: DefaultVariant, Replicas: DefaultReplicas},
		Load:     Load{KeepAlive: true, Path: DefaultPath, Timeout: DefaultTimeout},
	}
	root := doc.Content[0]
	var nameNode, variantNode, replicasNode, rateNode, clientsNode, nodesNode *yaml.Node
	var replicas, rate, clients, nodes int64 = DefaultReplicas, 0, 1, 0
	r.mapping(root, "", map[string]field{
		"name": {required: true, decode: func(n *yaml.Node, p string) {
			nameNode = n
			r.str(n, p, &s.Name)
		}},
		"description": {decode: func(n *yaml.Node, p string) { r.text(n, p, &s.Description) }},
		"labels": {decode: func(n *yaml.Node, p string) {
			r.sequence(n, p, func(_ int, item *yaml.Node, p string) {
				var l string
				if r.str(item, p, &l); l == "" {
					return
				}
				if !nameRE.MatchString(l) || len(l) > maxNameLen {
					r.fail(item, p, "a label is lowercase letters, digits and '-', at most %d characters, got %q", maxNameLen, l)
					return
				}
				if !slices.Contains(s.Labels, l) {
					s.Labels = append(s.Labels, l)
				}
			})
		}},
		"seed":     {decode: func(n *yaml.Node, p string) { r.integer(n, p, &s.Seed) }},
		"parallel": {decode: func(n *yaml.Node, p string) { r.boolean(n, p, &s.Parallel) }},
		"settle":   {decode: func(n *yaml.Node, p string) { r.duration(n, p, &s.Settle) }},
		"oracle": {decode: func(n *yaml.Node, p string) {
			before := len(r.problems)
			r.params(n, p, &s.Oracle)
			if len(r.problems) == before && vocab.OracleParams != nil {
				if err := vocab.OracleParams(s.Oracle); err != nil {
					r.fail(n, p, "%v", err)
				}
			}
		}},
		"target": {decode: func(n *yaml.Node, p string) {
			r.mapping(n, p, map[string]field{
				"variant": {decode: func(n *yaml.Node, p string) {
					variantNode = n
					r.str(n, p, &s.Target.Variant)
				}},
				"replicas": {decode: func(n *yaml.Node, p string) {
					replicasNode = n
					r.integer(n, p, &replicas)
				}},
				"bootstrap": {decode: func(n *yaml.Node, p string) { r.duration(n, p, &s.Target.Bootstrap) }},
				"nodes": {decode: func(n *yaml.Node, p string) {
					nodesNode = n
					r.integer(n, p, &nodes)
				}},
			})
			if nodesNode != nil {
				checkRange(r, nodesNode, p+".nodes", nodes, 1, 100)
			}
		}},
		"load": {required: true, decode: func(n *yaml.Node, p string) {
			r.mapping(n, p, map[string]field{
				"rate": {required: true, decode: func(n *yaml.Node, p string) {
					rateNode = n
					r.integer(n, p, &rate)
				}},
				"duration":  {required: true, decode: func(n *yaml.Node, p string) { r.duration(n, p, &s.Load.Duration) }},
				"keepAlive": {decode: func(n *yaml.Node, p string) { r.boolean(n, p, &s.Load.KeepAlive) }},
				"path":      {decode: func(n *yaml.Node, p string) { r.str(n, p, &s.Load.Path) }},
				"takes":     {decode: func(n *yaml.Node, p string) { r.duration(n, p, &s.Load.Takes) }},
				"timeout":   {decode: func(n *yaml.Node, p string) { r.duration(n, p, &s.Load.Timeout) }},
				"clients": {decode: func(n *yaml.Node, p string) {
					clientsNode = n
					r.integer(n, p, &clients)
				}},
			})
			if rateNode != nil {
				checkRange(r, rateNode, p+".rate", rate, 1, 2000)
			}
			if clientsNode != nil {
				checkRange(r, clientsNode, p+".clients", clients, 1, 100)
			}
		}},
		"faults": {decode: func(n *yaml.Node, p string) {
			r.sequence(n, p, func(_ int, item *yaml.Node, p string) {
				f := Fault{Line: item.Line}
				var typeNode, paramsNode *yaml.Node
				r.mapping(item, p, map[string]field{
					"type": {required: true, decode: func(n *yaml.Node, p string) {
						typeNode = n
						r.str(n, p, &f.Type)
					}},
					"at":       {required: true, decode: func(n *yaml.Node, p string) { r.duration(n, p, &f.At) }},
					"duration": {decode: func(n *yaml.Node, p string) { r.duration(n, p, &f.Duration) }},
					"until": {decode: func(n *yaml.Node, p string) {
						if r.str(n, p, &f.Until); f.Until != "" {
							checkName(r, n, p, "moment", f.Until, UntilValues)
						}
					}},
					"atLeast": {decode: func(n *yaml.Node, p string) {
						if r.str(n, p, &f.AtLeast); f.AtLeast != "" {
							checkName(r, n, p, "moment", f.AtLeast, UntilValues)
						}
					}},
					"params": {decode: func(n *yaml.Node, p string) {
						paramsNode = n
						r.params(n, p, &f.Params)
					}},
				})
				switch {
				case f.Until != "" && f.AtLeast != "":
					r.fail(item, p+".atLeast", "until and atLeast both size the fault: give one")
				case f.AtLeast != "" && f.Duration == 0:
					r.fail(item, p+".atLeast", "atLeast stretches a fault's duration: give the fault one (its minimum)")
				}
				if typeNode != nil && f.Type != "" && checkName(r, typeNode, p+".type", "fault type", f.Type, vocab.Faults) && vocab.FaultParams != nil {
					if err := vocab.FaultParams(f.Type, f.Params); err != nil {
						r.fail(orNode(paramsNode, item), p+".params", "%v", err)
					}
				}
				s.Faults = append(s.Faults, f)
			})
		}},
		"expect": {required: true, decode: func(n *yaml.Node, p string) {
			r.sequence(n, p, func(_ int, item *yaml.Node, p string) {
				e := Expectation{Line: item.Line}
				var paramsNode *yaml.Node
				ruleNode := resolve(item)
				if ruleNode.Kind == yaml.ScalarNode {
					r.str(ruleNode, p, &e.Rule)
				} else {
					ruleNode = nil
					r.mapping(item, p, map[string]field{
						"rule": {required: true, decode: func(n *yaml.Node, p string) {
							ruleNode = n
							r.str(n, p, &e.Rule)
						}},
						"params": {decode: func(n *yaml.Node, p string) {
							paramsNode = n
							r.params(n, p, &e.Params)
						}},
						"tolerance": {decode: func(n *yaml.Node, p string) { r.text(n, p, &e.Tolerance) }},
					})
				}
				if vocab.Tolerances != nil && e.Rule != "" && strings.TrimSpace(e.Tolerance) == "" {
					if set := vocab.Tolerances(e.Rule, e.Params); len(set) > 0 {
						r.fail(orNode(paramsNode, item), p+".params",
							"%s loosens the bound of %s by hand: say why in a one-line \"tolerance:\" beside params (it is shown in the report)",
							strings.Join(set, ", "), e.Rule)
					}
				}
				if ruleNode != nil && e.Rule != "" {
					rp := p
					if resolve(item).Kind == yaml.MappingNode {
						rp = p + ".rule"
					}
					if checkName(r, ruleNode, rp, "verdict rule", e.Rule, vocab.Rules) && vocab.RuleParams != nil {
						if err := vocab.RuleParams(e.Rule, e.Params); err != nil {
							r.fail(orNode(paramsNode, item), p+".params", "%v", err)
						}
					}
				}
				s.Expect = append(s.Expect, e)
			})
			if resolve(n).Kind == yaml.SequenceNode && len(resolve(n).Content) == 0 {
				r.fail(n, p, "must name at least one verdict rule")
			}
			for _, d := range vocab.Defaults {
				if !slices.Contains(s.Rules(), d) {
					s.Expect = append(s.Expect, Expectation{Rule: d})
				}
			}
		}},
	})
	s.Target.Replicas = int(replicas)
	s.Target.Nodes = int(nodes)
	s.Load.Rate = int(rate)
	s.Load.Clients = int(clients)

	if nameNode != nil && s.Name != "" {
		if !nameRE.MatchString(s.Name) || len(s.Name) > maxNameLen {
			r.fail(nameNode, "name", "must be lowercase letters, digits and '-', at most %d characters, got %q", maxNameLen, s.Name)
		}
	}
	if variantNode != nil {
		checkName(r, variantNode, "target.variant", "variant", s.Target.Variant, vocab.Variants)
	}
	if replicasNode != nil {
		checkRange(r, replicasNode, "target.replicas", replicas, 1, 10)
	}
	if len(r.problems) == 0 {
		checkTiming(r, s)
	}
	if len(r.problems) > 0 {
		return nil, &InvalidError{Problems: r.problems}
	}
	return s, nil
}

// checkTiming checks that every fault starts and ends while the load runs, so that both its effect
// and its recovery are observed under load.
func checkTiming(r *nodeReader, s *Scenario) {
	if s.Load.Duration <= 0 {
		r.problems = append(r.problems, Problem{File: r.file, Path: "load.duration", Msg: "must be positive"})
		return
	}
	for i, f := range s.Faults {
		p := fmt.Sprintf("faults[%d]", i)
		if f.At >= s.Load.Duration {
			r.problems = append(r.problems, Problem{File: r.file, Line: f.Line, Path: p + ".at",
				Msg: fmt.Sprintf("starts at %s, not before the load ends at %s", f.At, s.Load.Duration)})
		} else if f.End() > s.Load.Duration {
			r.problems = append(r.problems, Problem{File: r.file, Line: f.Line, Path: p + ".duration",
				Msg: fmt.Sprintf("ends at %s, after the load ends at %s", f.End(), s.Load.Duration)})
		}
	}
}

func checkRange(r *nodeReader, n *yaml.Node, path string, v, lo, hi int64) {
	for _, p := range r.problems {
		if p.Path == path {
			return // already reported (missing or wrong type)
		}
	}
	if v < lo || v > hi {
		r.fail(n, path, "must be between %d and %d, got %d", lo, hi, v)
	}
}

// checkName reports a name missing from known; it returns whether the name is acceptable.
func checkName(r *nodeReader, n *yaml.Node, path, what, name string, known []string) bool {
	if known == nil {
		return true
	}
	for _, k := range known {
		if k == name {
			return true
		}
	}
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	r.fail(n, path, "unknown %s %q (known: %s)", what, name, strings.Join(sorted, ", "))
	return false
}

func orNode(n, fallback *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return fallback
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// yamlErrorLine extracts the line from a yaml syntax error, or 0.
func yamlErrorLine(err error) int {
	m := yamlLineRE.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	var n int
	fmt.Sscan(m[1], &n)
	return n
}

// yamlErrorText strips the library's prefix and the line (already in the location).
func yamlErrorText(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	s = yamlLineRE.ReplaceAllString(s, "")
	s = strings.TrimLeft(s, ": ")
	return s
}
