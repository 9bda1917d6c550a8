package timeline

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DeclaredFault is one fault as the scenario declares it (after any hold), named as its actions are
// on the timeline ("faults[2]"). Due is when it was to be injected, as a timeline offset (the load's
// start plus the fault's "at"); Duration is 0 for a one-shot fault.
type DeclaredFault struct {
	Name     string        `json:"name"`
	Type     string        `json:"type"`
	Due      time.Duration `json:"due"`
	Duration time.Duration `json:"duration,omitempty"`
}

// FaultSlack is how far a fault may stray from its declaration and still be the fault the scenario
// declared: injected at most FaultSlack after it was due, and active for at least its declared
// duration less FaultSlack (less a quarter of it, for a fault shorter than 8 s; see slack).
//
// Why two seconds: the schedule sleeps to each offset to the millisecond, but a fault records its
// inject only once it has acted, after its own set-up: a freeze finds the pod's process on its node
// (an exec into the node container or a call to the node agent), a rollout patches the workload.
// On this project's 2-core machines, with two scenarios side by side, that set-up alone has taken
// most of a second, so one second would turn an ordinary busy moment into INCONCLUSIVE. A fault
// that strays further was held up by something else (a previous revert's proof, a starved node:
// the audit's case was 14 s), and it matters: the fixtures probe every second, so a PASS would rest
// on a milder fault than the one the file declares. A quarter of a short fault is the same loss in
// proportion: a 3 s outage that ran 2 s lost a third of itself.
const FaultSlack = 2 * time.Second

// slack is how much of a fault of duration d may be missing: FaultSlack, at most a quarter of d.
func slack(d time.Duration) time.Duration { return min(FaultSlack, d/4) }

func (d DeclaredFault) label() string { return d.Type + " (" + d.Name + ")" }

// Shortfall says in one line why the fault's trace among windows (FaultWindows of the run) does not
// show the fault the scenario declared, or "" when it does. A skipped window is a trace: it says
// itself why the fault did not act (FaultWindow.Unproven). Otherwise the fault must have been
// injected at most FaultSlack late and, when timed and reverted, have stayed at most
// min(FaultSlack, Duration/4) short of its declared duration. A fault with no window at all left no
// trace: nothing shows it was injected or why not.
func (d DeclaredFault) Shortfall(windows []FaultWindow) string {
	var start, end time.Duration
	found, reverted := false, false
	for _, w := range windows {
		if w.Name != d.Name {
			continue
		}
		if w.Skipped {
			return ""
		}
		if !found || w.Start < start {
			start = w.Start
		}
		if w.Reverted {
			end, reverted = max(end, w.End), true
		}
		found = true
	}
	if !found {
		return fmt.Sprintf("%s left no trace on the timeline: due at %s, it was neither injected nor recorded as skipped", d.label(), secs(d.Due))
	}
	var why []string
	if late := start - d.Due; late > FaultSlack {
		why = append(why, "injected "+secs(late)+" late")
	}
	if d.Duration > 0 && reverted {
		ran := end - start
		if ran < d.Duration-slack(d.Duration) {
			if early := d.Due + d.Duration - end; early > slack(d.Duration) {
				why = append(why, "reverted "+secs(early)+" before its declared end")
			}
			msg := fmt.Sprintf("%s ran %s of its declared %s", d.label(), secs(ran), secs(d.Duration))
			if len(why) > 0 {
				msg += ": " + strings.Join(why, ", ")
			}
			return msg
		}
	}
	if len(why) == 0 {
		return ""
	}
	return fmt.Sprintf("%s was %s (due at %s)", d.label(), strings.Join(why, ", "), secs(d.Due))
}

// secs is d in seconds to a tenth ("0.2s", "14s").
func secs(d time.Duration) string {
	return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + "s"
}
