package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/probegate/probegate/internal/verdict"
)

// WriteJSON writes the comparison as indented JSON.
func WriteJSON(w io.Writer, c *Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("encode comparison: %w", err)
	}
	return nil
}

// WriteText writes the comparison as a table: the runs compared, then per scenario a row with its
// status in each run and one per verdict (status, measure, values, change, bound, flag), the
// scenarios found in one side only, and a closing line with the counts.
func WriteText(w io.Writer, c *Comparison) error {
	var b strings.Builder
	for i, p := range c.Runs {
		label := fmt.Sprintf("old %d", i+1)
		if i == len(c.Runs)-1 {
			label = "new"
		}
		fmt.Fprintf(&b, "%-5s  %s\n", label, p)
	}
	fmt.Fprintf(&b, "drift: a measure that lost more than %s\n\n", thresholdWords(c.Thresholds))
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	for _, s := range c.Scenarios {
		fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t%s\n", s.Name, statusTrend(s.Status), scenarioFlag(s))
		for _, v := range s.Verdicts {
			q := v.Quantity
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.Rule, statusTrend(v.Status),
				quantityName(q), valueTrend(q), changeWords(q), boundWords(q), verdictFlag(v))
		}
		if q := s.Latency; q != nil {
			flag := ""
			if q.Drift {
				flag = "DRIFT"
			}
			fmt.Fprintf(tw, "  %s\t\t\t%s\t%s\t\t%s\n", q.Name, valueTrend(q), changeWords(q), flag)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n") {
		if table.Len() > 0 {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	if len(c.OnlyOld)+len(c.OnlyNew) > 0 {
		b.WriteByte('\n')
	}
	if len(c.OnlyOld) > 0 {
		fmt.Fprintf(&b, "only in the old runs: %s\n", strings.Join(c.OnlyOld, ", "))
	}
	if len(c.OnlyNew) > 0 {
		fmt.Fprintf(&b, "only in the new run: %s\n", strings.Join(c.OnlyNew, ", "))
	}
	fmt.Fprintf(&b, "\n%s\n", Summary(c))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

// thresholdWords is "25% of its headroom to its bound (recovery-within 50%, p99 30% of its baseline)".
func thresholdWords(t Thresholds) string {
	d, _ := t.For("")
	s := pct(d) + " of its headroom to its bound"
	var per []string
	for _, k := range sortedRules(t) {
		w := k + " " + pct(t.Rules[k])
		if k == LatencyKey {
			w += " of its baseline"
		}
		per = append(per, w)
	}
	if len(per) > 0 {
		s += " (" + strings.Join(per, ", ") + ")"
	}
	return s
}

// Summary is the closing line: "2 regressions (1 new FAIL, 1 drift); 1 status change".
func Summary(c *Comparison) string {
	if c.Regressions == 0 {
		s := fmt.Sprintf("no regression across %d scenarios", len(c.Scenarios))
		if c.StatusChanges > 0 {
			s += fmt.Sprintf("; %s", plural(c.StatusChanges, "status change"))
		}
		return s
	}
	return fmt.Sprintf("%s (%s, %s); %s", plural(c.Regressions, "regression"), plural(c.NewFails, "new FAIL"),
		plural(c.Drifts, "drift"), plural(c.StatusChanges, "status change"))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// statusTrend is "PASS → FAIL" ("—" where a run lacks it).
func statusTrend(st []verdict.Status) string {
	parts := make([]string, len(st))
	for i, s := range st {
		parts[i] = string(s)
		if s == "" {
			parts[i] = "—"
		}
	}
	return strings.Join(parts, " → ")
}

func quantityName(q *Quantity) string {
	if q == nil {
		return ""
	}
	return q.Name
}

// valueTrend is "7.6s → 13.7s" ("—" where a run has no value).
func valueTrend(q *Quantity) string {
	if q == nil {
		return ""
	}
	parts := make([]string, len(q.Values))
	for i, v := range q.Values {
		parts[i] = "—"
		if v != nil {
			parts[i] = Number(*v, q.Unit)
		}
	}
	s := strings.Join(parts, " → ")
	if isCount(q.Unit) {
		s += " " + q.Unit
	}
	return s
}

// changeWords is the NEW value less the baseline with the share of headroom it used: "+6.1s, 80%
// of the headroom"; the note when drift could not be judged.
func changeWords(q *Quantity) string {
	if q == nil {
		return ""
	}
	if q.Change == nil {
		return q.Note
	}
	d := Format(*q.Change, q.Unit)
	if *q.Change >= 0 {
		d = "+" + d
	}
	switch {
	case q.Consumed == nil:
	case q.Bounded() && *q.Consumed >= 0:
		d += fmt.Sprintf(", %.0f%% of the headroom", *q.Consumed*100)
	case q.Bounded():
		d += fmt.Sprintf(", headroom +%.0f%%", -*q.Consumed*100)
	default:
		d += fmt.Sprintf(", %+.0f%%", *q.Consumed*100)
	}
	if q.Note != "" {
		d += " (" + q.Note + ")"
	}
	return d
}

// boundWords is the NEW run's bound: "≤ 12s", "≥ 2s".
func boundWords(q *Quantity) string {
	if q == nil || !q.Bounded() {
		return ""
	}
	b := q.Bounds[len(q.Bounds)-1]
	if b == nil {
		for i := len(q.Bounds) - 1; i >= 0 && b == nil; i-- {
			b = q.Bounds[i]
		}
		if b == nil {
			return ""
		}
	}
	op := "≤"
	if q.Direction == verdict.AtLeast {
		op = "≥"
	}
	return op + " " + Format(*b, q.Unit)
}

// verdictFlag is NEW FAIL, DRIFT, both, or "changed" for a status change that is no regression.
func verdictFlag(v Verdict) string {
	var flags []string
	if v.NewFail {
		flags = append(flags, "NEW FAIL")
	}
	if v.Quantity != nil && v.Quantity.Drift {
		flags = append(flags, "DRIFT")
	}
	if len(flags) == 0 && v.StatusChanged {
		flags = append(flags, "changed")
	}
	return strings.Join(flags, ", ")
}

func scenarioFlag(s Scenario) string {
	if s.StatusChanged {
		return "changed"
	}
	return ""
}
