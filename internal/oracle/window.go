package oracle

import (
	"fmt"
	"time"
)

// Window is a span of offsets, counted from a reference instant (a fault's start or revert, a
// container's start), in which Kubernetes can act: [Min, Max]. Max includes AppLag, the app's own
// time to turn a fault into a probe answer, when stated. Allowance is added after Max for the
// action to become visible where the harness observes it (EndpointSlice propagation, or the kill and
// restart of a container). Explain says how the numbers were derived, in one line.
type Window struct {
	Min           time.Duration `json:"min"`
	Max           time.Duration `json:"max"`
	AppLag        time.Duration `json:"appLag,omitempty"`
	Allowance     time.Duration `json:"allowance"`
	AllowanceNote string        `json:"allowanceNote,omitempty"`
	Explain       string        `json:"explain"`
}

// Deadline is the latest offset at which the action may be observed: Max + Allowance.
func (w Window) Deadline() time.Duration { return w.Max + w.Allowance }

// Contains reports whether an observation at offset d lies in [Min, Max + Allowance].
func (w Window) Contains(d time.Duration) bool { return d >= w.Min && d <= w.Deadline() }

// Early reports whether an observation at offset d came before Min.
func (w Window) Early(d time.Duration) bool { return d < w.Min }

// String is "[1s, 3s] + 2s propagation = by 5s".
func (w Window) String() string {
	if w.Allowance == 0 {
		return fmt.Sprintf("[%s, %s]", w.Min, w.Max)
	}
	note := w.AllowanceNote
	if note == "" {
		note = "allowance"
	}
	return fmt.Sprintf("[%s, %s] + %s %s = by %s", w.Min, w.Max, w.Allowance, note, w.Deadline())
}
