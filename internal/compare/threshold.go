package compare

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/probegate/probegate/internal/verdict"
)

// DefaultThreshold is the share of its headroom a measure may lose from the baseline to the new
// run before it is flagged as drift: a quarter.
const DefaultThreshold = 0.25

// LatencyKey names the scenario's load p99 latency in thresholds. It has no bound, so it is shown
// always and flagged only when a threshold is set for it (a share of its baseline value).
const LatencyKey = "p99"

// Thresholds says how much of its headroom a measure may lose before it counts as drift: Default
// for every rule, Rules for the named ones (fractions: 0.25 is 25 %).
type Thresholds struct {
	Default float64            `json:"default"`
	Rules   map[string]float64 `json:"rules,omitempty"`
}

// For is the threshold of rule, and whether one is set for it at all (the load's p99 has none
// unless given).
func (t Thresholds) For(rule string) (float64, bool) {
	if v, ok := t.Rules[rule]; ok {
		return v, true
	}
	if rule == LatencyKey {
		return 0, false
	}
	if t.Default == 0 {
		return DefaultThreshold, true
	}
	return t.Default, true
}

// String is "25%" followed by the per-rule ones: "25%; recovery-within 50%".
func (t Thresholds) String() string {
	d, _ := t.For("")
	s := pct(d)
	for _, k := range sortedRules(t) {
		s += fmt.Sprintf("; %s %s", k, pct(t.Rules[k]))
	}
	return s
}

// ParseThresholds reads --threshold values: "PCT" sets the default, "RULE=PCT" one rule's (RULE a
// registered verdict rule, or p99 for the load's latency). PCT is a percentage above 0, with or
// without a trailing "%".
func ParseThresholds(specs []string) (Thresholds, error) {
	t := Thresholds{Default: DefaultThreshold}
	known := append(verdict.Names(), LatencyKey)
	for _, spec := range specs {
		rule, value, named := strings.Cut(spec, "=")
		if !named {
			value, rule = rule, ""
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(value), "%"), 64)
		if err != nil || v <= 0 {
			return Thresholds{}, fmt.Errorf("threshold %q: want a percentage above 0 (25, 25%%) or RULE=PCT", spec)
		}
		if !named {
			t.Default = v / 100
			continue
		}
		rule = strings.TrimSpace(rule)
		if !slices.Contains(known, rule) {
			return Thresholds{}, fmt.Errorf("threshold %q: no rule %q (known: %s)", spec, rule, strings.Join(known, ", "))
		}
		if t.Rules == nil {
			t.Rules = map[string]float64{}
		}
		t.Rules[rule] = v / 100
	}
	return t, nil
}

func sortedRules(t Thresholds) []string {
	keys := make([]string, 0, len(t.Rules))
	for k := range t.Rules {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func pct(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" }
