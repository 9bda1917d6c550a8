package reports

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/probegate/probegate/internal/verdict"
)

// ColorFor reports whether output to f should be coloured: only when f is a terminal and NO_COLOR
// is unset or empty.
func ColorFor(f *os.File) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiDim    = "\x1b[2m"
)

// maxFigure bounds the width of the key-figure column.
const maxFigure = 60

// WriteTerminal writes the compact summary: per scenario a heading line with its outcome and load
// figures, one row per verdict (status, rule, key figure, evidence pointer), then a final line
// such as "12 scenarios: 11 passed, 1 failed", and a line saying so when the run was interrupted.
// Colour codes are written only when color is true.
func WriteTerminal(w io.Writer, r *Report, color bool) error {
	paint := func(code, s string) string {
		if !color || code == "" {
			return s
		}
		return code + s + ansiReset
	}
	var b strings.Builder
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		st := s.Status()
		figures := scenarioFigures(s)
		if st == verdict.NotApplicable {
			figures = "" // nothing ran
		}
		head := fmt.Sprintf("%s  %s  %s", paint(statusColor(st), pad(string(st), 5)),
			paint(ansiBold, suiteName(s)), paint(ansiDim, figures))
		b.WriteString(strings.TrimRight(head, " "))
		b.WriteByte('\n')
		if s.Error != "" {
			fmt.Fprintf(&b, "  %s  %s\n", paint(ansiRed, "error"), s.Error)
		}
		if st == verdict.NotApplicable { // nothing ran: the reason says it all
			fmt.Fprintf(&b, "  %s\n", paint(ansiDim, "not run: "+s.NotApplicable))
			continue
		}
		if s.Capacity != nil {
			fmt.Fprintf(&b, "  %s\n", paint(ansiDim, "measured before the overload: "+s.Capacity.String()))
		}
		if line := connectionsLine(s.Connections); line != "" {
			fmt.Fprintf(&b, "  %s\n", paint(ansiDim, line))
		}
		if s.Summary != nil {
			if line := sliceLine(s.Summary.Slice); line != "" {
				fmt.Fprintf(&b, "  %s\n", paint(ansiDim, line))
			}
			if line := propagationLine(s.Summary.Propagation); line != "" {
				fmt.Fprintf(&b, "  %s\n", paint(ansiDim, line))
			}
			if line := doorLine(s.Summary.Door); line != "" {
				fmt.Fprintf(&b, "  %s\n", paint(ansiDim, line))
			}
			if line := hostLine(s.Summary.Host); line != "" {
				fmt.Fprintf(&b, "  %s\n", paint(ansiYellow, line))
			}
		}
		if s.Oracle != nil {
			for _, a := range s.Oracle.Assumptions {
				if a.Capped() { // every declared assumption is in report.html; a capped one changes the windows
					fmt.Fprintf(&b, "  %s\n", paint(ansiDim, a.Explain))
				}
			}
		}
		ruleW, figW := 0, 0
		for _, v := range s.Verdicts {
			ruleW = max(ruleW, utf8.RuneCountInString(v.Rule))
			figW = max(figW, utf8.RuneCountInString(truncate(v.Observed, maxFigure)))
		}
		statusW := 4
		for _, v := range s.Verdicts {
			statusW = max(statusW, len(v.Status))
		}
		for _, v := range s.Verdicts {
			line := fmt.Sprintf("  %s  %s  %s  %s", paint(statusColor(v.Status), pad(string(v.Status), statusW)),
				pad(v.Rule, ruleW), pad(truncate(v.Observed, maxFigure), figW), evidencePointer(s, v))
			b.WriteString(strings.TrimRight(line, " "))
			b.WriteByte('\n')
			for _, u := range v.Unshown {
				fmt.Fprintf(&b, "  %s  could not show: %s\n", strings.Repeat(" ", statusW), u)
			}
			for _, c := range v.Caveats {
				fmt.Fprintf(&b, "  %s  %s\n", strings.Repeat(" ", statusW), paint(ansiYellow, "caveat: "+c))
			}
			for _, tol := range v.Tolerances {
				if !strings.Contains(tol, "(rule default)") { // the scenario's own; defaults are in report.html
					fmt.Fprintf(&b, "  %s  %s\n", strings.Repeat(" ", statusW), paint(ansiDim, "tolerance "+tol))
				}
			}
		}
	}
	b.WriteString(FinalLine(r.Counts()))
	b.WriteByte('\n')
	if r.Interrupted != "" {
		fmt.Fprintf(&b, "%s by %s: the run stopped early; scenarios it cut short were not judged\n",
			paint(ansiRed, "interrupted"), r.Interrupted)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write terminal summary: %w", err)
	}
	return nil
}

// FinalLine is the closing line: "N scenarios: P passed, F failed" plus errored and inconclusive
// counts when there are any.
func FinalLine(c Counts) string {
	noun := "scenarios"
	if c.Scenarios == 1 {
		noun = "scenario"
	}
	line := fmt.Sprintf("%d %s: %d passed, %d failed", c.Scenarios, noun, c.Passed, c.Failed)
	if c.Errored > 0 {
		line += fmt.Sprintf(", %d errored", c.Errored)
	}
	if c.Inconclusive > 0 {
		line += fmt.Sprintf(", %d inconclusive", c.Inconclusive)
	}
	if c.NotApplicable > 0 {
		line += fmt.Sprintf(", %d not applicable", c.NotApplicable)
	}
	return line
}

func statusColor(s verdict.Status) string {
	switch s {
	case verdict.Pass:
		return ansiGreen
	case verdict.Fail, StatusError:
		return ansiRed
	case verdict.Inconclusive:
		return ansiYellow
	case verdict.NotApplicable:
		return ansiDim
	}
	return ""
}

// scenarioFigures is the scenario's one-line load summary.
func scenarioFigures(s *ScenarioReport) string {
	if s.Summary == nil {
		return Seconds(s.Duration())
	}
	q := s.Summary.Requests
	parts := []string{
		fmt.Sprintf("%d requests", max(q.Sent, q.Recorded)),
		percent(q.SuccessRatio) + " ok",
	}
	if q.P99 > 0 {
		parts = append(parts, "p99 "+Millis(q.P99))
	}
	if a := s.Attribution; a != nil && a.Reached > 0 {
		parts = append(parts, percent(a.Coverage)+" tied to a pod")
	}
	if n := len(s.Summary.Restarts); n > 0 {
		causes := make([]string, 0, n)
		total := 0
		for c, k := range s.Summary.Restarts {
			causes = append(causes, c+" "+strconv.Itoa(k))
			total += k
		}
		sort.Strings(causes)
		parts = append(parts, fmt.Sprintf("%d restarts (%s)", total, strings.Join(causes, ", ")))
	}
	parts = append(parts, Seconds(s.Duration()))
	return strings.Join(parts, ", ")
}

// evidencePointer says where to look: the first evidence's file, sequence number and offset, or
// the moment of failure.
func evidencePointer(s *ScenarioReport, v verdict.Result) string {
	if len(v.Evidence) > 0 {
		e := v.Evidence[0]
		e.Note = ""
		return evidenceLine(s, e)
	}
	if v.At != nil {
		return "at " + Offset(*v.At)
	}
	return ""
}

func pad(s string, w int) string {
	if n := utf8.RuneCountInString(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func percent(r float64) string { return strconv.FormatFloat(r*100, 'f', 2, 64) + "%" }

// Seconds formats a duration as "126.0 s".
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

// Millis formats a duration as "3012 ms" (or "4.2 ms" below 10 ms).
func Millis(d time.Duration) string {
	ms := d.Seconds() * 1000
	if ms < 10 {
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}
