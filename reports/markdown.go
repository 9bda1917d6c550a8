package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/probegate/probegate/internal/verdict"
)

// markdownLine bounds a cell or list item of the markdown summary, in runes.
const markdownLine = 160

// WriteMarkdown writes a compact summary of the run for a CI page (GitHub's step summary, a
// merge request comment): the counts, a table of each scenario's status, each FAIL and
// INCONCLUSIVE verdict and each ERROR with its one line, and each NOT APPLICABLE scenario with its
// reason.
func WriteMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### probegate: %s\n\n", FinalLine(r.Counts()))
	if r.Interrupted != "" {
		fmt.Fprintf(&b, "**Interrupted** by %s: scenarios it cut short were not judged.\n\n", MarkdownEscape(r.Interrupted))
	}
	b.WriteString("| scenario | status | load | time |\n|---|---|---|---|\n")
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		st := s.Status()
		load, took := "", ""
		if st != verdict.NotApplicable { // nothing ran
			took = Seconds(s.Duration())
			if s.Summary != nil {
				q := s.Summary.Requests
				load = fmt.Sprintf("%d requests, %s ok", max(q.Sent, q.Recorded), percent(q.SuccessRatio))
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", MarkdownEscape(suiteName(s)), markdownStatus(st), load, took)
	}
	var problems, notApplicable []string
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		name := "**" + MarkdownEscape(suiteName(s)) + "**"
		switch {
		case s.Error != "":
			problems = append(problems, fmt.Sprintf("- %s ERROR: %s", name, MarkdownEscape(s.Error)))
		case s.NotApplicable != "":
			notApplicable = append(notApplicable, fmt.Sprintf("- %s: %s", name, MarkdownEscape(s.NotApplicable)))
			continue
		}
		for _, v := range s.Verdicts {
			if line := markdownVerdict(v); line != "" {
				problems = append(problems, fmt.Sprintf("- %s `%s` %s: %s", name, v.Rule, v.Status, line))
			}
		}
	}
	if len(problems) > 0 {
		b.WriteString("\n#### Not passed\n\n")
		b.WriteString(strings.Join(problems, "\n") + "\n")
	}
	if len(notApplicable) > 0 {
		b.WriteString("\n#### NOT APPLICABLE\n\n")
		b.WriteString(strings.Join(notApplicable, "\n") + "\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write markdown summary: %w", err)
	}
	return nil
}

// markdownVerdict is the one line a FAIL or INCONCLUSIVE verdict gets: what was observed (and when it
// failed), or what could not be shown; empty for any other status.
func markdownVerdict(v verdict.Result) string {
	switch v.Status {
	case verdict.Fail:
		line := v.Observed
		if v.At != nil && !strings.Contains(line, Offset(*v.At)) {
			line += " (at " + Offset(*v.At) + ")"
		}
		return MarkdownEscape(line)
	case verdict.Inconclusive:
		if len(v.Unshown) > 0 {
			return MarkdownEscape("could not show: " + v.Unshown[0])
		}
		return MarkdownEscape(v.Observed)
	}
	return ""
}

func markdownStatus(s verdict.Status) string {
	switch s {
	case verdict.Fail, StatusError:
		return "**" + string(s) + "**"
	case verdict.Inconclusive:
		return "_" + string(s) + "_"
	}
	return string(s)
}

// MarkdownEscape makes s safe inside a markdown table cell or list item on one line: newlines
// become spaces, pipes, backticks, asterisks, underscores and angle brackets are escaped, and it is
// cut to markdownLine runes.
func MarkdownEscape(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = truncate(s, markdownLine)
	return markdownEscaper.Replace(s)
}

var markdownEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`, "`", "\\`", "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;")
