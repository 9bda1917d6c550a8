package verify

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteText prints, per workload, the applied patch, each re-run's verdicts before → after (one
// row per scenario × rule), and one conclusion line per recommendation.
func WriteText(w io.Writer, p *Plan) error {
	var b strings.Builder
	for i, wl := range p.Workloads {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "verify %s/%s container %s", strings.ToLower(wl.Kind), wl.Name, wl.Container)
		if wl.Target != "" {
			fmt.Fprintf(&b, " (%s)", wl.Target)
		}
		b.WriteString("\n")
		var applied []string
		for _, c := range wl.Changes {
			if c.Applied {
				applied = append(applied, fmt.Sprintf("%s → %s", c.Rec.Field, c.Rec.Recommended))
			}
		}
		if len(applied) == 0 {
			b.WriteString("  applied: nothing (no change tune recommends can be verified by a re-run)\n")
		} else {
			fmt.Fprintf(&b, "  applied (a strategic-merge patch, nothing else changed):\n")
			for _, a := range applied {
				fmt.Fprintf(&b, "    %s\n", a)
			}
		}
		writeTable(&b, wl)
		b.WriteString("  conclusions:\n")
		width := 0
		for _, c := range wl.Changes {
			width = max(width, len(c.Rec.Field))
		}
		for _, c := range wl.Changes {
			fmt.Fprintf(&b, "    %-*s  %s: %s\n", width, c.Rec.Field, c.Outcome, c.Why)
		}
	}
	if len(p.Workloads) == 0 {
		b.WriteString("no scenario in these runs gave evidence: nothing to verify\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTable prints each re-run's rules before → after.
func writeTable(b *strings.Builder, wl *Workload) {
	if len(wl.Reruns) == 0 {
		return
	}
	type row struct{ scenario, rule, before, after string }
	rows := []row{{"scenario (seed)", "rule", "before", "after"}}
	for _, r := range wl.Reruns {
		var rules []string
		for _, v := range r.Before {
			rules = append(rules, v.Rule)
		}
		for _, v := range r.After {
			if !slices.Contains(rules, v.Rule) {
				rules = append(rules, v.Rule)
			}
		}
		name := fmt.Sprintf("%s (%d)", r.Label, r.Scenario.Seed)
		if len(rules) == 0 {
			rows = append(rows, row{name, "-", errWord(r.BeforeError), errWord(r.AfterError)})
		}
		for j, rule := range rules {
			if j > 0 {
				name = ""
			}
			rows = append(rows, row{name, rule, beforeStatus(r, rule), afterStatus(r, rule)})
		}
	}
	var w [3]int
	for _, r := range rows {
		w[0], w[1], w[2] = max(w[0], len(r.scenario)), max(w[1], len(r.rule)), max(w[2], len(r.before))
	}
	for _, r := range rows {
		arrow := "→"
		if r.before == "before" {
			arrow = " "
		}
		fmt.Fprintf(b, "  %-*s  %-*s  %-*s %s %s\n", w[0], r.scenario, w[1], r.rule, w[2], r.before, arrow, r.after)
	}
	for _, r := range wl.Reruns {
		if r.AfterError != "" {
			fmt.Fprintf(b, "  %s after: error: %s\n", r.Label, r.AfterError)
		}
	}
}

func errWord(e string) string {
	if e == "" {
		return "-"
	}
	return "ERROR"
}
