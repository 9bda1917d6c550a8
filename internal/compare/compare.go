// Package compare sets probegate runs side by side: per scenario and verdict, the status in each
// run and the measured quantity behind the verdict (report.json's measure), flagging a verdict that
// newly FAILs and a quantity that lost more than a threshold of its headroom to its bound (drift),
// so a nightly series hears about a shrinking margin before the verdict turns. It reads reports
// only; nothing here talks to a cluster.
package compare

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// Comparison is the outcome of comparing one or more OLD runs with a NEW one.
type Comparison struct {
	// Runs are the report files compared, OLD first, NEW last.
	Runs       []string   `json:"runs"`
	Thresholds Thresholds `json:"thresholds"`
	// Scenarios are those of the NEW run that some OLD run has too, in the NEW run's order.
	Scenarios []Scenario `json:"scenarios"`
	// OnlyOld names the scenarios of an OLD run that the NEW run lacks; OnlyNew those of the NEW
	// run no OLD run has. They are listed, not judged.
	OnlyOld []string `json:"onlyOld,omitempty"`
	OnlyNew []string `json:"onlyNew,omitempty"`
	// NewFails counts verdicts that FAIL in the NEW run and did not in the baseline; Drifts the
	// verdicts (and latencies) flagged as drift; Regressions the verdicts with either, each once.
	NewFails      int `json:"newFails"`
	Drifts        int `json:"drifts"`
	Regressions   int `json:"regressions"`
	StatusChanges int `json:"statusChanges"`
}

// Scenario is one scenario across the runs. Its name is "name/variant" when it has a variant.
type Scenario struct {
	Name string `json:"name"`
	// Status is the scenario's outcome in each run, OLD first; "" where the run lacks it.
	Status        []verdict.Status `json:"status"`
	StatusChanged bool             `json:"statusChanged,omitempty"`
	Verdicts      []Verdict        `json:"verdicts"`
	// Latency is the load's p99 latency in milliseconds (no bound: flagged only when a threshold
	// is set for p99).
	Latency *Quantity `json:"latency,omitempty"`
}

// Verdict is one rule's verdict across the runs. A scenario that lists a rule twice has the
// second as "rule#2".
type Verdict struct {
	Rule string `json:"rule"`
	// Status is the verdict's status in each run, OLD first; "" where the run lacks it.
	Status []verdict.Status `json:"status"`
	// StatusChanged: the NEW status differs from the baseline's (the last OLD run that has it).
	StatusChanged bool `json:"statusChanged,omitempty"`
	// NewFail: the NEW status is FAIL and the baseline's was not.
	NewFail  bool      `json:"newFail,omitempty"`
	Quantity *Quantity `json:"quantity,omitempty"`
}

// Regressed reports whether the verdict counts as a regression: a new FAIL or drift.
func (v Verdict) Regressed() bool { return v.NewFail || (v.Quantity != nil && v.Quantity.Drift) }

// Quantity is a measured quantity across the runs and how far the NEW value moved from the
// baseline's toward its bound.
type Quantity struct {
	Name      string            `json:"name"`
	Unit      string            `json:"unit"`
	Direction verdict.Direction `json:"direction"`
	// Values and Bounds are per run, OLD first; null where the run has no such measure. Bounds
	// is absent for a quantity without one (the load's p99).
	Values []*float64 `json:"values"`
	Bounds []*float64 `json:"bounds,omitempty"`
	// Baseline is the OLD runs' median value (by headroom; with an even count the one with less
	// headroom), Change the NEW value less it.
	Baseline *float64 `json:"baseline,omitempty"`
	Change   *float64 `json:"change,omitempty"`
	// Consumed is the share of the baseline's headroom the NEW run lost (negative: it gained);
	// without a bound, the share of the baseline value it moved the wrong way. Absent when the
	// baseline had no headroom (at or past its bound) or was zero.
	Consumed *float64 `json:"consumed,omitempty"`
	// Threshold is the Consumed beyond which the quantity drifts (absent: not judged).
	Threshold *float64 `json:"threshold,omitempty"`
	Drift     bool     `json:"drift,omitempty"`
	// Note says why drift could not be judged or what else changed (the bound, the measure).
	Note string `json:"note,omitempty"`
}

// New is the NEW run's value, when it has one.
func (q *Quantity) New() *float64 { return q.Values[len(q.Values)-1] }

// Bounded reports whether the quantity has a bound.
func (q *Quantity) Bounded() bool { return q.Bounds != nil }

// Compare sets the OLD runs (the first of runs, oldest first) beside the NEW one (the last).
func Compare(runs []Run, th Thresholds) (*Comparison, error) {
	if len(runs) < 2 {
		return nil, fmt.Errorf("compare needs at least two runs (OLD... NEW), got %d", len(runs))
	}
	c := &Comparison{Thresholds: th}
	indexes := make([]map[string]*reports.ScenarioReport, len(runs))
	last := len(runs) - 1
	inOld := map[string]bool{}
	var oldOrder []string
	for i, r := range runs {
		c.Runs = append(c.Runs, r.Path)
		indexes[i] = scenarioIndex(r.Report)
		if i == last {
			break
		}
		for _, key := range scenarioKeys(r.Report) {
			if !inOld[key] {
				inOld[key] = true
				oldOrder = append(oldOrder, key)
			}
		}
	}
	for _, key := range scenarioKeys(runs[last].Report) {
		if !inOld[key] {
			c.OnlyNew = append(c.OnlyNew, key)
			continue
		}
		per := make([]*reports.ScenarioReport, len(runs))
		for i, idx := range indexes {
			per[i] = idx[key]
		}
		sc := compareScenario(key, per, th)
		for _, v := range sc.Verdicts {
			if v.NewFail {
				c.NewFails++
			}
			if v.Quantity != nil && v.Quantity.Drift {
				c.Drifts++
			}
			if v.Regressed() {
				c.Regressions++
			}
			if v.StatusChanged {
				c.StatusChanges++
			}
		}
		if sc.Latency != nil && sc.Latency.Drift {
			c.Drifts++
			c.Regressions++
		}
		c.Scenarios = append(c.Scenarios, sc)
	}
	for _, key := range oldOrder {
		if indexes[last][key] == nil {
			c.OnlyOld = append(c.OnlyOld, key)
		}
	}
	return c, nil
}

// scenarioKeys names a report's scenarios "name/variant", in order; a name repeated in one report
// gets "#2", "#3".
func scenarioKeys(r *reports.Report) []string {
	seen := map[string]int{}
	keys := make([]string, len(r.Scenarios))
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		k := s.Name
		if s.Variant != "" {
			k += "/" + s.Variant
		}
		seen[k]++
		if n := seen[k]; n > 1 {
			k = fmt.Sprintf("%s#%d", k, n)
		}
		keys[i] = k
	}
	return keys
}

func scenarioIndex(r *reports.Report) map[string]*reports.ScenarioReport {
	idx := map[string]*reports.ScenarioReport{}
	for i, k := range scenarioKeys(r) {
		idx[k] = &r.Scenarios[i]
	}
	return idx
}

// verdictKeys names a scenario's verdicts by rule, "rule#2" for a rule listed again.
func verdictKeys(s *reports.ScenarioReport) []string {
	seen := map[string]int{}
	keys := make([]string, len(s.Verdicts))
	for i, v := range s.Verdicts {
		seen[v.Rule]++
		keys[i] = v.Rule
		if n := seen[v.Rule]; n > 1 {
			keys[i] = fmt.Sprintf("%s#%d", v.Rule, n)
		}
	}
	return keys
}

func compareScenario(key string, per []*reports.ScenarioReport, th Thresholds) Scenario {
	sc := Scenario{Name: key, Status: make([]verdict.Status, len(per))}
	verdicts := make([]map[string]*verdict.Result, len(per))
	var order []string
	seen := map[string]bool{}
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	last := len(per) - 1
	// The NEW run's verdicts first, in its order; then any only an OLD run has.
	for _, i := range append([]int{last}, indices(last)...) {
		s := per[i]
		if s == nil {
			continue
		}
		sc.Status[i] = s.Status()
		verdicts[i] = map[string]*verdict.Result{}
		for j, k := range verdictKeys(s) {
			verdicts[i][k] = &s.Verdicts[j]
			add(k)
		}
	}
	sc.StatusChanged = changed(sc.Status)
	for _, k := range order {
		v := Verdict{Rule: k, Status: make([]verdict.Status, len(per))}
		measures := make([]*verdict.Measure, len(per))
		for i := range per {
			if r := verdicts[i][k]; r != nil {
				v.Status[i] = r.Status
				measures[i] = r.Measure
			}
		}
		v.StatusChanged = changed(v.Status)
		if base, ok := baselineStatus(v.Status); ok {
			v.NewFail = v.Status[last] == verdict.Fail && base != verdict.Fail
		}
		rule, _, _ := strings.Cut(k, "#")
		v.Quantity = compareMeasures(measures, th, rule)
		sc.Verdicts = append(sc.Verdicts, v)
	}
	sc.Latency = compareLatency(per, th)
	return sc
}

// indices is 0, 1, …, n-1.
func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// baselineStatus is the status of the last OLD run that has one.
func baselineStatus(st []verdict.Status) (verdict.Status, bool) {
	for i := len(st) - 2; i >= 0; i-- {
		if st[i] != "" {
			return st[i], true
		}
	}
	return "", false
}

// changed reports whether the NEW status differs from the baseline's (both present).
func changed(st []verdict.Status) bool {
	base, ok := baselineStatus(st)
	return ok && st[len(st)-1] != "" && st[len(st)-1] != base
}

// compareMeasures follows the NEW run's measure through the OLD runs: those with the same name and
// unit make the baseline. It returns nil when no run has a measure.
func compareMeasures(ms []*verdict.Measure, th Thresholds, rule string) *Quantity {
	last := len(ms) - 1
	ref := ms[last]
	if ref == nil {
		for i := last - 1; i >= 0 && ref == nil; i-- {
			ref = ms[i]
		}
		if ref == nil {
			return nil
		}
	}
	q := &Quantity{Name: ref.Name, Unit: ref.Unit, Direction: ref.Direction,
		Values: make([]*float64, len(ms)), Bounds: make([]*float64, len(ms))}
	var olds []verdict.Measure
	var others []string
	for i, m := range ms {
		if m == nil {
			continue
		}
		if m.Name != ref.Name || m.Unit != ref.Unit || m.Direction != ref.Direction {
			others = append(others, fmt.Sprintf("%s (%s)", m.Name, m.Unit))
			continue
		}
		q.Values[i], q.Bounds[i] = ptr(m.Value), ptr(m.Bound)
		if i < last {
			olds = append(olds, *m)
		}
	}
	switch {
	case ms[last] == nil:
		q.Note = "the new run measured nothing"
		return q
	case len(olds) == 0 && len(others) > 0:
		q.Note = "the old runs measured another quantity: " + strings.Join(others, ", ")
		return q
	case len(olds) == 0:
		q.Note = "no old run recorded a measure (a report older than schemaVersion 4, or nothing to judge)"
		return q
	}
	sort.SliceStable(olds, func(i, j int) bool { return olds[i].Headroom() < olds[j].Headroom() })
	base := olds[(len(olds)-1)/2]
	now := *ms[last]
	q.Baseline, q.Change = ptr(base.Value), ptr(now.Value-base.Value)
	if base.Bound != now.Bound {
		q.Note = fmt.Sprintf("bound changed: %s → %s", Format(base.Bound, q.Unit), Format(now.Bound, q.Unit))
	}
	t, ok := th.For(rule)
	if !ok {
		return q
	}
	q.Threshold = ptr(t)
	lost := base.Headroom() - now.Headroom()
	room := base.Headroom()
	if room > 0 {
		q.Consumed = ptr(lost / room)
		q.Drift = lost/room > t
		return q
	}
	// At or past the bound already: no share of headroom to lose. Going past it is a FAIL, which
	// the status says; a verdict that failed already does not regress by failing worse.
	if room < 0 {
		q.Note = joinNote(q.Note, "past its bound already in the baseline")
	}
	return q
}

// compareLatency follows the load's p99 latency, in milliseconds; a higher one is worse.
func compareLatency(per []*reports.ScenarioReport, th Thresholds) *Quantity {
	q := &Quantity{Name: "load p99 latency", Unit: "ms", Direction: verdict.AtMost, Values: make([]*float64, len(per))}
	var olds []float64
	last := len(per) - 1
	for i, s := range per {
		if s == nil || s.Summary == nil || s.Summary.Requests.P99 <= 0 {
			continue
		}
		v := float64(s.Summary.Requests.P99.Microseconds()) / 1000
		q.Values[i] = ptr(v)
		if i < last {
			olds = append(olds, v)
		}
	}
	if q.New() == nil || len(olds) == 0 {
		return nil
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(olds))) // worst first, as by headroom
	base := olds[(len(olds)-1)/2]
	now := *q.New()
	q.Baseline, q.Change = ptr(base), ptr(now-base)
	t, ok := th.For(LatencyKey)
	if !ok || base == 0 {
		return q
	}
	q.Threshold = ptr(t)
	q.Consumed = ptr((now - base) / base)
	q.Drift = *q.Consumed > t
	return q
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func ptr(f float64) *float64 { return &f }

// Format prints a value in its unit: seconds to the millisecond ("2.35s"), ratios as percentages,
// counts as they are ("3 restarts").
func Format(v float64, unit string) string {
	if n := Number(v, unit); !isCount(unit) {
		return n
	}
	return trimFloat(v) + " " + unit
}

// Number prints a value with its unit's symbol (s, ms, %) but without a counted unit's name.
func Number(v float64, unit string) string {
	switch unit {
	case "s":
		return trimFloat(math.Round(v*1000)/1000) + "s"
	case "ms":
		return trimFloat(math.Round(v*10)/10) + "ms"
	case "ratio":
		return trimFloat(math.Round(v*10000)/100) + "%"
	}
	return trimFloat(v)
}

// isCount reports whether unit names what is counted ("restarts"), printed once after the numbers.
func isCount(unit string) bool {
	switch unit {
	case "s", "ms", "ratio", "":
		return false
	}
	return true
}

func trimFloat(v float64) string { return fmt.Sprintf("%.6g", v) }
