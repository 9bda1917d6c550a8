package verdict

// Direction says which way a measure may move before its verdict fails.
type Direction string

// Directions of a measure's bound.
const (
	// AtMost: the verdict holds while the value stays at or below its bound (a delay, a count).
	AtMost Direction = "max"
	// AtLeast: the verdict holds while the value stays at or above its bound (a lead, a floor).
	AtLeast Direction = "min"
)

// Measure is the one quantity a rule judged and the bound it judged it against, as data: what a
// comparison of two runs follows from night to night (a lead that shrinks, a recovery that grows)
// before the verdict turns. When a rule judges several pods or faults, it is the one with the
// least headroom.
type Measure struct {
	// Name says what was measured, in a few words ("withdrawal lead before exit").
	Name string `json:"name"`
	// Value is the measured quantity, in Unit.
	Value float64 `json:"value"`
	// Unit is "s" for durations, else what is counted ("requests", "restarts", "endpoints",
	// "cycles") or "ratio".
	Unit string `json:"unit"`
	// Bound is the limit the rule held Value to, in Unit.
	Bound float64 `json:"bound"`
	// Direction is "max" when Value must not exceed Bound, "min" when it must not fall below it.
	Direction Direction `json:"direction"`
}

// Headroom is how far the value is from its bound, in the measure's unit: positive or zero while
// the bound holds, negative past it.
func (m Measure) Headroom() float64 {
	if m.Direction == AtLeast {
		return m.Value - m.Bound
	}
	return m.Bound - m.Value
}

// Valid reports whether the measure's direction is one of the two known.
func (m Measure) Valid() bool { return m.Direction == AtMost || m.Direction == AtLeast }

// measure records the rule's measured quantity, keeping, over several calls (one per pod or
// fault), the one with the least headroom.
func (r *Result) measure(name, unit string, dir Direction, value, bound float64) {
	m := Measure{Name: name, Value: value, Unit: unit, Bound: bound, Direction: dir}
	if r.Measure == nil || m.Headroom() < r.Measure.Headroom() {
		r.Measure = &m
	}
}
