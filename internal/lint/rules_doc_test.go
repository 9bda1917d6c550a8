package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/verdict"
)

// rulesMarkdown renders the rule reference: a table, then each rule's explanation, fix and
// confirming scenario, exactly as the code states them.
func rulesMarkdown(matrix []MatrixEvidence) []byte {
	var b strings.Builder
	b.WriteString("# probegate lint rules\n\n")
	b.WriteString("Generated from the rule files by `go test ./internal/lint -run TestRulesMarkdown -update`; ")
	b.WriteString("`probegate lint --explain ID` prints the same text.\n\n")
	b.WriteString("Severities: error, warning, info. `--fail-on` (default `warning`) sets the lowest severity that ")
	b.WriteString("makes `probegate lint` exit 1; `--fail-on none` never fails. Exit 2 is bad input. With `--confirm`, ")
	b.WriteString("exit 3 means nothing reached `--fail-on` but some finding's confirmation was inconclusive.\n\n")
	b.WriteString("`--confirm` marks a finding *confirmed* when a verdict its rule predicts to fail (the last column) ")
	b.WriteString("FAILed, and *refuted* only when they all PASSed in a run that shows the scenario's faults reached ")
	b.WriteString("the workload: every other verdict that judges a fault's effect (")
	b.WriteString(strings.Join(faultEffectRules(), ", "))
	b.WriteString(") PASSed and no verdict was INCONCLUSIVE. A freeze that ")
	b.WriteString("stopped only an entrypoint wrapper leaves no-liveness-restarts PASSing and readiness \"never withdrawn\": ")
	b.WriteString("that run is inconclusive, saying so, not a refutation. A FAIL of another rule (min-ready-endpoints, ")
	b.WriteString("failed-requests-budget) shows the fault did something and does not stand in the way.\n\n")
	b.WriteString("\"shown on the cluster\" lists the bundled variants whose scenario FAILs a predicted verdict in ")
	b.WriteString("every `make test` (the mutation matrix, scenarios/mutations.yaml, for variants lint flags with the rule) ")
	b.WriteString("and the recorded `--confirm` runs on real apps (internal/lint/evidence.go); a refuted finding keeps its ")
	b.WriteString("severity, since one app's run shows only that app.\n\n")
	b.WriteString("| ID | name | severity | confirmed by | shown on the cluster |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range Rules() {
		confirm := "—"
		if r.Scenario != "" {
			confirm = "`" + r.Scenario + "`"
			if len(r.Predicts) > 0 {
				confirm += " FAILs " + strings.Join(r.Predicts, ", ")
			}
		}
		fmt.Fprintf(&b, "| %s | [%s](#%s) | %s | %s | %s |\n", r.ID, r.Name, strings.ToLower(r.ID)+"-"+r.Name, r.Severity, confirm,
			EvidenceSummary(r, matrix))
	}
	for _, r := range Rules() {
		fmt.Fprintf(&b, "\n## %s %s\n\n%s (default severity: %s).\n\n%s\n\n**Fix.** %s\n\n", r.ID, r.Name, r.Summary, r.Severity, r.Explanation, r.Fix)
		fmt.Fprintf(&b, "**Confirm.** %s.\n\n**Evidence.** %s\n", r.HowToConfirm(), EvidenceText(r, matrix))
	}
	return []byte(b.String())
}

// faultEffectRules names the verdict rules that judge a fault's effect, as Confirm reads them.
func faultEffectRules() []string {
	var out []string
	for _, r := range verdict.Rules() {
		if r.Needs&verdict.NeedsFaultEffect != 0 {
			out = append(out, r.Name)
		}
	}
	return out
}

// TestRulesMarkdown keeps RULES.md in step with the rules.
func TestRulesMarkdown(t *testing.T) {
	golden(t, "RULES.md", rulesMarkdown(matrixEvidence(t)))
}
