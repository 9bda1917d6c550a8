package compare

import (
	"fmt"
	"io"
	"strings"

	"github.com/probegate/probegate/reports"
)

// WriteMarkdown writes the comparison's news for a CI page, under the run's markdown summary: the
// counts, one table row per verdict whose status changed or whose measure drifted, and the
// scenarios found in one side only. Unchanged verdicts are left out.
func WriteMarkdown(w io.Writer, c *Comparison) error {
	var b strings.Builder
	olds := len(c.Runs) - 1
	fmt.Fprintf(&b, "\n#### Against %s\n\n", plural(olds, "earlier run"))
	fmt.Fprintf(&b, "%s. Drift: a measure that lost more than %s.\n", capitalize(Summary(c)), reports.MarkdownEscape(thresholdWords(c.Thresholds)))
	var rows []string
	row := func(scenario, rule, status string, q *Quantity, flag string) {
		values := valueTrend(q)
		switch {
		case q == nil || q.Consumed == nil:
		case q.Bounded():
			values += fmt.Sprintf(" (%.0f%% of the headroom)", *q.Consumed*100)
		default:
			values += fmt.Sprintf(" (%+.0f%%)", *q.Consumed*100)
		}
		if flag != "" && flag != "changed" {
			flag = "**" + flag + "**"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s |", reports.MarkdownEscape(scenario), rule, status,
			reports.MarkdownEscape(quantityName(q)), reports.MarkdownEscape(values), reports.MarkdownEscape(boundWords(q)), flag))
	}
	for _, s := range c.Scenarios {
		for _, v := range s.Verdicts {
			if v.StatusChanged || v.Regressed() {
				row(s.Name, "`"+v.Rule+"`", statusTrend(v.Status), v.Quantity, verdictFlag(v))
			}
		}
		if q := s.Latency; q != nil && q.Drift {
			row(s.Name, "load", "", q, "DRIFT")
		}
	}
	if len(rows) > 0 {
		b.WriteString("\n| scenario | rule | status | measure | values | bound | |\n|---|---|---|---|---|---|---|\n")
		b.WriteString(strings.Join(rows, "\n") + "\n")
	}
	if len(c.OnlyOld) > 0 {
		fmt.Fprintf(&b, "\nOnly in the earlier runs: %s\n", reports.MarkdownEscape(strings.Join(c.OnlyOld, ", ")))
	}
	if len(c.OnlyNew) > 0 {
		fmt.Fprintf(&b, "\nOnly in this run: %s\n", reports.MarkdownEscape(strings.Join(c.OnlyNew, ", ")))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write markdown comparison: %w", err)
	}
	return nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
