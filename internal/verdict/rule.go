package verdict

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/probegate/probegate/internal/oracle"
)

// Rule is one verdict rule: a pure function of the recorded run, registered by name so scenario
// files can list it with parameters.
type Rule struct {
	Name   string      `json:"name"`
	Title  string      `json:"title"`
	Doc    string      `json:"doc"`
	Params []ParamSpec `json:"params,omitempty"`
	// Needs is what the judgement rests on; Evaluate refuses a PASS the run cannot back (see Needs).
	Needs Needs `json:"-"`
	// Default rules judge every scenario, listed in its expect or not.
	Default bool `json:"default,omitempty"`
	// Allowances names the oracle allowances the rule's bounds widen with (oracle.AllowancePropagation,
	// oracle.AllowanceRestart): one the target or scenario widened past its default is listed among
	// the verdict's tolerances.
	Allowances []string              `json:"-"`
	Judge      func(in Input) Result `json:"-"`
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Rule{}
)

// Register adds a rule. It panics on a duplicate or malformed rule (a programming error).
func Register(r Rule) {
	if r.Name == "" || r.Judge == nil || r.Title == "" {
		panic(fmt.Sprintf("verdict: rule %q needs a name, a title and a judge", r.Name))
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[r.Name]; dup {
		panic(fmt.Sprintf("verdict: rule %q registered twice", r.Name))
	}
	registry[r.Name] = r
}

// Lookup returns the rule registered under name.
func Lookup(name string) (Rule, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	r, ok := registry[name]
	return r, ok
}

// Rules returns every registered rule, sorted by name.
func Rules() []Rule {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]Rule, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns every registered rule's name, sorted (for scenario.Vocabulary).
func Names() []string {
	rules := Rules()
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.Name
	}
	return out
}

// Defaults returns the names of the rules every scenario is judged by, sorted.
func Defaults() []string {
	var out []string
	for _, r := range Rules() {
		if r.Default {
			out = append(out, r.Name)
		}
	}
	return out
}

// CheckParams reports the first problem with params for the named rule: an unknown rule, an
// unknown parameter, or a value of the wrong kind. Scenario loading calls it to fail early.
func CheckParams(rule string, params map[string]string) error {
	r, ok := Lookup(rule)
	if !ok {
		return fmt.Errorf("unknown verdict rule %q (known: %s)", rule, strings.Join(Names(), ", "))
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		spec, ok := r.param(k)
		if !ok {
			return fmt.Errorf("rule %s has no parameter %q (it takes: %s)", rule, k, r.paramNames())
		}
		if err := spec.Kind.check(params[k]); err != nil {
			return fmt.Errorf("rule %s parameter %s: %w", rule, k, err)
		}
		if spec.Vacuous != nil {
			if why := spec.Vacuous(params[k]); why != "" {
				return fmt.Errorf("rule %s parameter %s=%s leaves the rule nothing to check (%s): drop the rule rather than make it pass whatever happens", rule, k, strings.TrimSpace(params[k]), why)
			}
		}
	}
	return nil
}

func (r Rule) param(name string) (ParamSpec, bool) {
	for _, p := range r.Params {
		if p.Name == name {
			return p, true
		}
	}
	return ParamSpec{}, false
}

func (r Rule) paramNames() string {
	if len(r.Params) == 0 {
		return "none"
	}
	names := make([]string, len(r.Params))
	for i, p := range r.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// Spec names a rule to run with its parameters, as a scenario's expect list states it.
type Spec struct {
	Rule   string            `json:"rule"`
	Params map[string]string `json:"params,omitempty"`
	// Tolerance is the scenario's one-line reason for the tolerance parameters it sets.
	Tolerance string `json:"tolerance,omitempty"`
}

// Evaluate checks one rule against the run: it validates the parameters, runs the rule with them
// and fills the result's rule name and title.
func Evaluate(in Input, s Spec) (Result, error) {
	if err := CheckParams(s.Rule, s.Params); err != nil {
		return Result{}, err
	}
	r, _ := Lookup(s.Rule)
	in.Params = Params(s.Params)
	in.Entries = in.sortedEntries()
	res := r.Judge(in)
	res.Rule = r.Name
	if res.Title == "" {
		res.Title = r.Title
	}
	if res.Status == "" {
		res.Status = Fail
		res.Observed = "rule returned no status (harness bug)"
	}
	r.Needs.gate(in, &res)
	hostCaveat(in, &res)
	res.Tolerances = r.tolerances(s)
	for _, a := range in.Oracle.Assumptions {
		if a.Widens() && slices.Contains(r.Allowances, a.Name) {
			res.Tolerances = append(res.Tolerances, a.Explain)
		}
	}
	return res, nil
}

// tolerances lists the hand-set allowances the judgement used: each parameter the spec sets to a
// value that loosens the rule (a non-zero tolerance, or a loosening value, ParamSpec.Loosens), with
// the spec's reason, and each non-zero default of a tolerance parameter, with the parameter's doc.
func (r Rule) tolerances(s Spec) []string {
	var out []string
	for _, p := range r.Params {
		if v, ok := s.Params[p.Name]; ok {
			if p.loosens(v) {
				out = append(out, fmt.Sprintf("%s=%s: %s", p.Name, v, s.Tolerance))
			}
			continue
		}
		if p.Tolerance && p.Default != "" && !isZero(p.Default) {
			out = append(out, fmt.Sprintf("%s=%s (rule default): %s", p.Name, p.Default, p.Doc))
		}
	}
	return out
}

// TolerancesSet names the parameters of rule that params set to a loosening value (a tolerance
// parameter's non-zero value, or a value ParamSpec.Loosens names): the hand-set allowances a
// scenario must give a reason for.
func TolerancesSet(rule string, params map[string]string) []string {
	r, ok := Lookup(rule)
	if !ok {
		return nil
	}
	var out []string
	for _, p := range r.Params {
		if v, set := params[p.Name]; set && p.loosens(v) {
			out = append(out, p.Name)
		}
	}
	return out
}

// isZero reports whether a parameter value is zero ("0", "0s", "0.0", "false"): a zero tolerance
// loosens nothing.
func isZero(v string) bool {
	switch strings.TrimSpace(v) {
	case "", "false":
		return true
	}
	if d, err := oracle.ParseSeconds(v); err == nil {
		return d == 0
	}
	return false
}
