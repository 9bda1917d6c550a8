package scenario

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// nodeReader walks a YAML node tree against a fixed schema, recording a Problem (with line and
// field path) for every unknown field, wrong type or missing required field.
type nodeReader struct {
	file     string
	problems []Problem
}

func (r *nodeReader) fail(n *yaml.Node, path, format string, args ...any) {
	p := Problem{File: r.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Column = n.Line, n.Column
	}
	r.problems = append(r.problems, p)
}

// field is one known key of a mapping: its decoder, and whether it must be present.
type field struct {
	required bool
	decode   func(n *yaml.Node, path string)
}

// mapping decodes n as a mapping with exactly the given fields. It reports unknown and duplicate
// keys and missing required fields (at the mapping's own line).
func (r *nodeReader) mapping(n *yaml.Node, path string, fields map[string]field) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		r.fail(n, path, "expected a mapping, got %s", describe(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		fp := join(path, key)
		f, ok := fields[key]
		switch {
		case !ok:
			r.fail(k, fp, "unknown field (known: %s)", strings.Join(sortedKeys(fields), ", "))
			continue
		case seen[key]:
			r.fail(k, fp, "duplicate field")
			continue
		}
		seen[key] = true
		f.decode(v, fp)
	}
	for _, key := range sortedKeys(fields) {
		if fields[key].required && !seen[key] {
			r.fail(n, join(path, key), "missing required field")
		}
	}
}

func (r *nodeReader) str(n *yaml.Node, path string, out *string) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		r.fail(n, path, "expected a string, got %s", describe(n))
		return
	}
	*out = n.Value
}

// text accepts any scalar as text (descriptions, parameter values).
func (r *nodeReader) text(n *yaml.Node, path string, out *string) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		r.fail(n, path, "expected a scalar value, got %s", describe(n))
		return
	}
	*out = n.Value
}

func (r *nodeReader) integer(n *yaml.Node, path string, out *int64) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		r.fail(n, path, "expected an integer, got %s", describe(n))
		return
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil {
		r.fail(n, path, "expected an integer: %v", err)
		return
	}
	*out = v
}

func (r *nodeReader) boolean(n *yaml.Node, path string, out *bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		r.fail(n, path, "expected true or false, got %s", describe(n))
		return
	}
	v, err := strconv.ParseBool(n.Value)
	if err != nil {
		r.fail(n, path, "expected true or false, got %q", n.Value)
		return
	}
	*out = v
}

func (r *nodeReader) duration(n *yaml.Node, path string, out *time.Duration) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		r.fail(n, path, "expected a Go duration such as \"30s\", got %s", describe(n))
		return
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		r.fail(n, path, "expected a Go duration such as \"30s\", got %q", n.Value)
		return
	}
	if d < 0 {
		r.fail(n, path, "must not be negative, got %s", n.Value)
		return
	}
	*out = d
}

// params decodes a flat mapping of names to scalar values.
func (r *nodeReader) params(n *yaml.Node, path string, out *map[string]string) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		r.fail(n, path, "expected a mapping of names to values, got %s", describe(n))
		return
	}
	m := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		fp := join(path, k.Value)
		if _, dup := m[k.Value]; dup {
			r.fail(k, fp, "duplicate parameter")
			continue
		}
		var s string
		r.text(v, fp, &s)
		m[k.Value] = s
	}
	*out = m
}

// sequence calls each for every item of a sequence node.
func (r *nodeReader) sequence(n *yaml.Node, path string, each func(i int, item *yaml.Node, path string)) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		r.fail(n, path, "expected a list, got %s", describe(n))
		return
	}
	for i, item := range n.Content {
		each(i, item, fmt.Sprintf("%s[%d]", path, i))
	}
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// describe names a node's YAML type for error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			return fmt.Sprintf("string %q", n.Value)
		case "!!int":
			return "integer " + n.Value
		case "!!float":
			return "number " + n.Value
		case "!!bool":
			return "boolean " + n.Value
		case "!!null":
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unexpected node"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys(m map[string]field) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
