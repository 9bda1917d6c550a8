package scenario

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a file, located by line and field path.
type Problem struct {
	File   string
	Line   int
	Column int
	// Path is the field path, e.g. "faults[1].params.latency".
	Path string
	Msg  string
}

func (p Problem) Error() string {
	loc := p.File
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if p.Path == "" {
		return fmt.Sprintf("%s: %s", loc, p.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, p.Path, p.Msg)
}

// InvalidError lists every problem found in one or more files. Its message is one line: the first
// problem, and how many more there are.
type InvalidError struct {
	Problems []Problem
}

func (e *InvalidError) Error() string {
	if len(e.Problems) == 0 {
		return "invalid scenario"
	}
	msg := e.Problems[0].Error()
	if n := len(e.Problems) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more problem%s)", n, plural(n))
	}
	return msg
}

// Lines returns every problem, one per line.
func (e *InvalidError) Lines() string {
	var b strings.Builder
	for _, p := range e.Problems {
		b.WriteString(p.Error())
		b.WriteByte('\n')
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
