package verdict

import (
	"fmt"
	"slices"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// overloadFault is the fault type whose verdicts rest on the target being saturated.
const overloadFault = "overload"

// SaturationShare is the share of the offered rate a target must serve, answered OK within the
// overload, to count as keeping up with it: a target that does has shown no saturation, and no
// withdrawal or shedding is owed.
const SaturationShare = 0.9

// saturation says whether the target was shown saturated during fault f (an overload): it failed to
// keep up with what was offered, answering fewer than SaturationShare of the requests sent in the
// window OK by the window's end (rejected, timed out, or queued past it). The note gives the
// figures either way ("offered 398/s, served 397/s OK (100 %), p99 571ms: not saturated"). A window
// with no request shows nothing: not shown.
func saturation(reqs []timeline.Request, f timeline.FaultWindow) (shown bool, note string) {
	if f.End <= f.Start {
		return false, "the overload has no span to measure"
	}
	span := (f.End - f.Start).Seconds()
	sent, served := 0, 0
	var lat []time.Duration
	for _, q := range reqs {
		if q.T < f.Start || q.T >= f.End {
			continue
		}
		sent++
		if q.OK() && q.End() <= f.End {
			served++
		}
		lat = append(lat, q.Latency)
	}
	if sent == 0 {
		return false, "no request was sent during the overload"
	}
	slices.Sort(lat)
	share := float64(served) / float64(sent)
	note = fmt.Sprintf("offered %.0f/s, served %.0f/s OK by the overload's end (%.0f %%), p99 %s",
		float64(sent)/span, float64(served)/span, 100*share, dur(lat[len(lat)*99/100]))
	if share >= SaturationShare {
		return false, note + ": not saturated"
	}
	return true, note + ": saturated"
}
