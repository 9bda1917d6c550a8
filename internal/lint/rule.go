package lint

import (
	"fmt"
	"sort"
	"strings"
)

// Rule is one check. Each rule lives in its own file (rule_<name>.go) and registers itself.
type Rule struct {
	ID          string   // stable identifier, "PG001"
	Name        string   // short slug, "identical-probes"
	Severity    Severity // default severity; a finding may lower or raise it with a reason
	Summary     string   // one line
	Explanation string   // one paragraph: what goes wrong, under which failure, and why
	Fix         string   // what to change
	// Scenario is the probegate scenario that confirms a finding on a real cluster. Rules whose
	// finding no scenario can show (the API server rejects the object) leave it empty and say how to
	// confirm in ConfirmNote.
	Scenario    string
	ConfirmNote string
	// Predicts are the verdict rules of Scenario that FAIL when a finding of this rule is right
	// (lint --confirm reads them); none when no verdict of the scenario judges it.
	Predicts []string
	// Restates lists rules whose finding on the same container and probe says nothing this rule's
	// finding does not: they are dropped when this rule fires.
	Restates []string
	// Check inspects one workload (with the whole inventory in ctx) and returns its findings.
	Check func(ctx *Context, w *Workload) []Finding
}

var registry = map[string]*Rule{}

// register adds r to the rule set; it panics on a duplicate ID or name, a programming error.
func register(r *Rule) {
	if _, dup := registry[r.ID]; dup {
		panic(fmt.Sprintf("lint: duplicate rule ID %s", r.ID))
	}
	for _, o := range registry {
		if o.Name == r.Name {
			panic(fmt.Sprintf("lint: duplicate rule name %s", r.Name))
		}
	}
	registry[r.ID] = r
}

// Rules returns every rule, ordered by ID.
func Rules() []*Rule {
	out := make([]*Rule, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// RuleByID finds a rule by its ID or name.
func RuleByID(id string) (*Rule, bool) {
	if r, ok := registry[id]; ok {
		return r, true
	}
	for _, r := range registry {
		if r.Name == id {
			return r, true
		}
	}
	return nil, false
}

// finding starts a finding of r about workload w at pos, with r's default severity. The rule adds
// the computed fix (and the probe, when the finding is about one).
func (r *Rule) finding(ctx *Context, w *Workload, pos Position, container, format string, args ...any) Finding {
	return Finding{
		RuleID:    r.ID,
		RuleName:  r.Name,
		Severity:  r.Severity,
		Object:    w.Ref(),
		Namespace: w.Namespace,
		Container: container,
		Message:   fmt.Sprintf(format, args...),
		Pos:       pos,
		Confirm:   ctx.confirm(r, w),
		Variant:   w.PodLabels[VariantLabel],
	}
}

// ruleID resolves a rule ID or name to the rule's ID.
func ruleID(s string) (string, bool) {
	r, ok := RuleByID(strings.TrimSpace(s))
	if !ok {
		return "", false
	}
	return r.ID, true
}
