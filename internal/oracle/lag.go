package oracle

import (
	"fmt"
	"time"
)

// Assumption is a timing the oracle takes on the target's word rather than from its probe settings:
// a declared app lag. Declared is what the annotation or scenario said, Used what the windows use;
// they differ when the declaration exceeded its cap.
type Assumption struct {
	Name     string        `json:"name"`
	Declared time.Duration `json:"declared"`
	Used     time.Duration `json:"used"`
	Source   string        `json:"source"`
	Cap      time.Duration `json:"cap"`
	Explain  string        `json:"explain"`
}

// Capped reports whether the declaration was cut down to its cap.
func (a Assumption) Capped() bool { return a.Used < a.Declared }

// capLag bounds a declared app lag by one period of the probe that reads it. An app's own delay
// before its probe endpoint reflects a fault is its business only while it stays inside one probe
// period; a longer lag would let a target widen every window it is judged by just by declaring so,
// so the windows use the cap and the report shows the declaration beside it.
func capLag(name string, lag valueSource, p ProbeTiming) (time.Duration, *Assumption) {
	if lag.d == 0 {
		return 0, nil
	}
	a := Assumption{Name: name, Declared: lag.d, Used: lag.d, Source: lag.src, Cap: p.Period}
	if a.Used > a.Cap {
		a.Used = a.Cap
		a.Explain = fmt.Sprintf("assumption: %s %s (%s) capped at one %s period, %s: a lag beyond the probe's own period is not the probe's timing",
			name, a.Declared, a.Source, p.Kind, a.Cap)
	} else {
		a.Explain = fmt.Sprintf("assumption: %s %s (%s), within one %s period (%s)", name, a.Declared, a.Source, p.Kind, a.Cap)
	}
	return a.Used, &a
}
