package lint

import (
	"fmt"
	"io"
	"strings"
)

// WriteText prints the report for a person: the input that could not be read, then one line per
// finding with its position, severity, rule and message, the fix with this manifest's numbers (and
// the confirming command when one can run as printed), and a summary line.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "%s: bad input: %s\n", p.Pos, p.Msg)
	}
	for _, h := range r.Hidden {
		fmt.Fprintf(&b, "%s: skipped: a hidden file (name it to lint it)\n", h)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "%s: %s %s %s %s: %s\n", f.Pos, f.Severity, f.RuleID, f.RuleName, f.Object, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(&b, "    fix: %s\n", f.Fix)
		}
		if f.Confirm != "" {
			fmt.Fprintf(&b, "    confirm: %s\n", f.Confirm)
		}
		if c := f.Confirmation; c != nil {
			fmt.Fprintf(&b, "    %s\n", c.Line())
		}
	}
	counts := map[Severity]int{}
	for _, f := range r.Findings {
		counts[f.Severity]++
	}
	scope := fmt.Sprintf("%s, %s", plural(r.Workloads, "workload"), plural(r.Services, "service"))
	if r.Skipped > 0 {
		scope += fmt.Sprintf(" (%s skipped", plural(r.Skipped, "other object"))
		if r.UnknownKinds > 0 {
			scope += fmt.Sprintf(", %d of unknown kinds", r.UnknownKinds)
		}
		scope += ")"
	}
	if len(r.Problems) > 0 {
		scope += fmt.Sprintf(", %s not read", plural(len(r.Problems), "document"))
	}
	suppressed := ""
	if len(r.Suppressed) > 0 {
		suppressed = fmt.Sprintf(", %d suppressed", len(r.Suppressed))
	}
	if len(r.Findings) == 0 {
		fmt.Fprintf(&b, "%s: no findings%s\n", scope, suppressed)
	} else {
		verdict := "pass"
		if r.Failed() {
			verdict = "FAIL"
		}
		fmt.Fprintf(&b, "%s: %s (%d error, %d warning, %d info%s); --fail-on %s: %s\n",
			scope, plural(len(r.Findings), "finding"), counts[Error], counts[Warning], counts[Info], suppressed, r.FailOn, verdict)
		if n := r.Confirmations(); len(n) > 0 {
			fmt.Fprintf(&b, "confirmed on the cluster: %d confirmed, %d refuted, %d inconclusive (refuted findings still count for --fail-on: silence them with a reason)\n",
				n[Confirmed], n[Refuted], n[Unconfirmed])
		}
		b.WriteString("Explain a rule: probegate lint --explain <ID>; silence one: --disable <ID> or annotation " + AnnotationIgnore + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteRule prints a rule's documentation for --explain and --list-rules, with the cluster evidence
// for it: matrix (from ShownByMatrix) and AppEvidence.
func WriteRule(w io.Writer, r *Rule, matrix []MatrixEvidence) error {
	confirm := r.HowToConfirm()
	_, err := fmt.Fprintf(w, "%s %s (%s)\n  %s\n\n  Why: %s\n\n  Fix: %s\n\n  Confirm: %s\n\n  Evidence: %s\n",
		r.ID, r.Name, r.Severity, r.Summary, r.Explanation, r.Fix, confirm, EvidenceText(r, matrix))
	return err
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
