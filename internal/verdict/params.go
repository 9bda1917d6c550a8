package verdict

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/oracle"
)

// Params are one rule's parameters as a scenario file states them (scalars as strings).
// Getters assume the values were checked with CheckParams and fall back to def otherwise.
type Params map[string]string

// ParamKind is the type of a rule parameter.
type ParamKind string

// Parameter kinds.
const (
	KindInt      ParamKind = "int"
	KindFloat    ParamKind = "float"
	KindDuration ParamKind = "duration" // "5s", "1500ms", or bare seconds "2.5"
	KindBool     ParamKind = "bool"
	KindList     ParamKind = "list" // comma-separated names
)

// ParamSpec documents one parameter a rule accepts.
type ParamSpec struct {
	Name    string    `json:"name"`
	Kind    ParamKind `json:"kind"`
	Default string    `json:"default,omitempty"`
	Doc     string    `json:"doc"`
	// Tolerance marks a hand-set allowance that loosens the rule's bound (a grace, a budget, a
	// deadline override): a scenario that sets it must say why, and the report shows it.
	Tolerance bool `json:"tolerance,omitempty"`
	// Loosens, for a parameter that is not a Tolerance throughout, names the values that loosen the
	// rule against its default (a count below "every pod", hold=false): set to one of them it is a
	// tolerance like the others. Where the default is measured in the run (every target pod, the
	// oracle's propagation), any value given may loosen and counts.
	Loosens func(v string) bool `json:"-"`
	// Vacuous, when set, says why a value leaves the rule nothing to check ("" when it does not):
	// CheckParams refuses such a value, since no reason makes a PASS that cannot fail mean anything.
	Vacuous func(v string) string `json:"-"`
}

// loosens reports whether v, given for p, loosens the rule's bound (so a scenario must say why).
func (p ParamSpec) loosens(v string) bool {
	if p.Tolerance {
		return !isZero(v)
	}
	return p.Loosens != nil && p.Loosens(v)
}

// anyValue is Loosens for a parameter that replaces a default measured in the run: any value may
// fall below it.
func anyValue(string) bool { return true }

// isFalse is Loosens for a boolean that is strict when true.
func isFalse(v string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && !b
}

// vacuousAt is Vacuous for a parameter whose zero (0, 0s, false) leaves nothing to check; why says
// what the rule then checks.
func vacuousAt(why string) func(string) string {
	return func(v string) string {
		if isZero(v) {
			return why
		}
		return ""
	}
}

func (k ParamKind) check(v string) error {
	var err error
	switch k {
	case KindInt:
		var n int
		n, err = strconv.Atoi(strings.TrimSpace(v))
		if err == nil && n < 0 {
			return fmt.Errorf("must not be negative, got %d", n)
		}
	case KindFloat:
		var f float64
		f, err = strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err == nil && f < 0 {
			return fmt.Errorf("must not be negative, got %v", f)
		}
	case KindDuration:
		_, err = oracle.ParseSeconds(v)
	case KindBool:
		_, err = strconv.ParseBool(strings.TrimSpace(v))
	}
	if err != nil {
		return fmt.Errorf("want %s, got %q", k, v)
	}
	return nil
}

// Has reports whether the parameter was given.
func (p Params) Has(name string) bool { _, ok := p[name]; return ok }

// Int returns an integer parameter or def.
func (p Params) Int(name string, def int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(p[name])); err == nil {
		return n
	}
	return def
}

// Float returns a number parameter or def.
func (p Params) Float(name string, def float64) float64 {
	if f, err := strconv.ParseFloat(strings.TrimSpace(p[name]), 64); err == nil {
		return f
	}
	return def
}

// Duration returns a duration parameter or def.
func (p Params) Duration(name string, def time.Duration) time.Duration {
	if v, ok := p[name]; ok {
		if d, err := oracle.ParseSeconds(v); err == nil {
			return d
		}
	}
	return def
}

// Bool returns a boolean parameter or def.
func (p Params) Bool(name string, def bool) bool {
	if b, err := strconv.ParseBool(strings.TrimSpace(p[name])); err == nil {
		return b
	}
	return def
}

// String returns a string parameter or def.
func (p Params) String(name, def string) string {
	if v, ok := p[name]; ok {
		return strings.TrimSpace(v)
	}
	return def
}

// List returns a comma-separated parameter as names, or nil.
func (p Params) List(name string) []string {
	var out []string
	for _, s := range strings.Split(p[name], ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
