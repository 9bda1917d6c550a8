package tune

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// maxEvidenceLines is how many evidence lines the text output shows per field (JSON has all).
const maxEvidenceLines = 3

// WriteText prints the human summary: per workload, each field current → recommended, why, the
// formula and the evidence.
func WriteText(w io.Writer, r Result) error {
	var b strings.Builder
	for i, wl := range r.Workloads {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s/%s container %s", strings.ToLower(wl.Kind), wl.Name, wl.Container)
		if wl.Target != "" {
			fmt.Fprintf(&b, " (%s)", wl.Target)
		}
		fmt.Fprintf(&b, "\n  settings from: %s\n  evidence from %d scenario runs\n", wl.SpecSource, len(wl.Scenarios))
		for _, rec := range wl.Recommendations {
			switch rec.Status {
			case Keep:
				fmt.Fprintf(&b, "  %-40s %s (keep)\n", rec.Field, rec.Current)
			case Change, Add:
				fmt.Fprintf(&b, "  %-40s %s → %s (%s)\n", rec.Field, rec.Current, rec.Recommended, rec.Status)
			default:
				fmt.Fprintf(&b, "  %-40s %s (%s)\n", rec.Field, rec.Current, rec.Status)
			}
			fmt.Fprintf(&b, "      why: %s\n", rec.Why)
			if rec.Formula != "" {
				fmt.Fprintf(&b, "      formula: %s\n", rec.Formula)
			}
			if rec.Supply != "" {
				fmt.Fprintf(&b, "      evidence would come from: %s\n", rec.Supply)
			}
			if rec.NotPatched != "" {
				fmt.Fprintf(&b, "      not in the patch: %s\n", rec.NotPatched)
			}
			for j, ev := range rec.Evidence {
				if j == maxEvidenceLines {
					fmt.Fprintf(&b, "      … %d more in -o json\n", len(rec.Evidence)-j)
					break
				}
				fmt.Fprintf(&b, "      evidence: %s %s: %s\n", ev.Run, ev.Scenario, evidenceWords(ev))
			}
		}
	}
	if len(r.Workloads) == 0 {
		b.WriteString("no scenario in these runs gave evidence\n")
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "skipped %s\n", s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func evidenceWords(ev Evidence) string {
	if ev.Pod == "" || strings.Contains(ev.Note, ev.Pod) {
		return ev.Note
	}
	return ev.Pod + " " + ev.Note
}

// WriteJSON prints r as one indented JSON document (durations in nanoseconds, as report.json).
func WriteJSON(w io.Writer, r Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write tune result: %w", err)
	}
	return nil
}
