package lint

// Report is the outcome of one lint run, ready to print in any output format.
type Report struct {
	Findings  []Finding
	Workloads int
	Services  int
	Skipped   int
	// FailOn is the threshold: findings at or above it fail the run.
	FailOn Severity
}

// NewReport lints inv with cfg and returns the report with threshold failOn.
func NewReport(inv *Inventory, cfg Config, failOn Severity) *Report {
	return &Report{
		Findings:  Lint(inv, cfg),
		Workloads: len(inv.Workloads),
		Services:  len(inv.Services),
		Skipped:   len(inv.Skipped),
		FailOn:    failOn,
	}
}

// Failed reports whether any finding is at or above the threshold.
func (r *Report) Failed() bool { return AtOrAbove(r.Findings, r.FailOn) > 0 }

// firedRules returns the rules with at least one finding, ordered by ID.
func (r *Report) firedRules() []*Rule {
	seen := map[string]bool{}
	for _, f := range r.Findings {
		seen[f.RuleID] = true
	}
	var out []*Rule
	for _, rule := range Rules() {
		if seen[rule.ID] {
			out = append(out, rule)
		}
	}
	return out
}
