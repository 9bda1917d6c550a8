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
	// Default is what the oracle uses when nothing is declared (0 for an app lag).
	Default time.Duration `json:"default,omitempty"`
	Explain string        `json:"explain"`
}

// Capped reports whether the declaration was cut down to its cap.
func (a Assumption) Capped() bool { return a.Used < a.Declared }

// Widens reports whether the windows use more than the default: the assumption loosens every
// bound built on it.
func (a Assumption) Widens() bool { return a.Used > a.Default }

// capAllowance bounds a declared allowance (propagation, restart allowance) by its ceiling and
// states it as an assumption when it differs from the default (nil when it is the default).
func capAllowance(name string, v valueSource, def, ceiling time.Duration) (time.Duration, *Assumption) {
	if v.d == def || v.d == 0 {
		return def, nil
	}
	a := Assumption{Name: name, Declared: v.d, Used: min(v.d, ceiling), Source: v.src, Cap: ceiling, Default: def}
	switch {
	case a.Capped():
		a.Explain = fmt.Sprintf("assumption: %s %s (%s) capped at %s (2.5× the default %s): a longer one would hide the delay it is meant to time",
			name, a.Declared, a.Source, a.Cap, def)
	case a.Widens():
		a.Explain = fmt.Sprintf("assumption: %s %s (%s) instead of the default %s (cap %s): every window built on it is that much wider",
			name, a.Used, a.Source, def, a.Cap)
	default:
		a.Explain = fmt.Sprintf("assumption: %s %s (%s) instead of the default %s: narrower", name, a.Used, a.Source, def)
	}
	return a.Used, &a
}

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
