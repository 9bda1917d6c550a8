package lint

// Report is the outcome of one lint run, ready to print in any output format.
type Report struct {
	// Findings are the active findings; Suppressed those a --disable, the config file or a
	// probegate.dev/ignore annotation silenced.
	Findings   []Finding
	Suppressed []Finding
	Workloads  int
	Services   int
	Skipped    int
	// UnknownKinds counts the skipped objects of kinds lint does not know (custom resources, …).
	UnknownKinds int
	// Problems is the input that could not be read; everything else was linted.
	Problems []*InputError
	// Hidden lists the hidden manifest files (.name.yaml) a directory walk skipped.
	Hidden []Position
	// FailOn is the threshold: findings at or above it fail the run.
	FailOn Severity
	// Version is the probegate version written into SARIF and JSON.
	Version string
}

// NewReport lints inv with cfg and returns the report with threshold failOn.
func NewReport(inv *Inventory, cfg Config, failOn Severity) *Report {
	r := &Report{
		Workloads:    len(inv.Workloads),
		Services:     len(inv.Services),
		Skipped:      len(inv.Skipped),
		UnknownKinds: inv.UnknownKinds(),
		Problems:     inv.Problems,
		FailOn:       failOn,
	}
	for _, s := range inv.Skipped {
		if s.Kind == HiddenFile {
			r.Hidden = append(r.Hidden, s.Pos)
		}
	}
	for _, f := range Lint(inv, cfg) {
		if f.Suppressed != nil {
			r.Suppressed = append(r.Suppressed, f)
		} else {
			r.Findings = append(r.Findings, f)
		}
	}
	return r
}

// ErrorReport is the report of a run that could not lint at all (no input, an unreachable
// cluster): the outputs still print a valid document that carries the error.
func ErrorReport(err error, failOn Severity) *Report {
	ie, ok := err.(*InputError)
	if !ok {
		ie = &InputError{Pos: Position{File: "lint"}, Msg: err.Error()}
	}
	return &Report{Problems: []*InputError{ie}, FailOn: failOn}
}

// Failed reports whether any active finding is at or above the threshold.
func (r *Report) Failed() bool { return AtOrAbove(r.Findings, r.FailOn) > 0 }

// firedRules returns the rules with at least one finding (active or suppressed), ordered by ID.
func (r *Report) firedRules() []*Rule {
	seen := map[string]bool{}
	for _, f := range r.Findings {
		seen[f.RuleID] = true
	}
	for _, f := range r.Suppressed {
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
