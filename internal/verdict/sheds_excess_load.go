package verdict

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "sheds-excess-load",
		Title: "Under overload the target keeps serving at capacity and rejects the excess fast",
		Doc: "While the overload fault lasts, the successful responses completed per second (goodput) stay at " +
			"least a fraction of the target's capacity measured outside the fault — the capacity search's held rate " +
			"when the run measured one before the load, else the load's goodput before the fault (its best three " +
			"consecutive seconds since the load or an earlier fault); with neither the goodput is not judged " +
			"(INCONCLUSIVE) — and the excess is rejected (an error answered at once) rather than " +
			"queued until the client gives up: at most max-timeouts of the requests sent during the fault time " +
			"out. A target that only queues collapses: every request waits longer than the client, and goodput " +
			"falls to zero while the server stays busy; one that collapses uniformly serves a trickle and rejects " +
			"the rest, which its own seconds of the fault would call its capacity.",
		Params: []ParamSpec{
			{Name: "fault", Kind: KindList, Doc: "fault names or types to judge; default every fault"},
			{Name: "goodput", Kind: KindFloat, Default: "0.5", Doc: "least mean goodput over the fault, as a fraction of the capacity measured outside it", Tolerance: true},
			{Name: "max-timeouts", Kind: KindFloat, Default: "0.01", Doc: "largest fraction of the requests sent during the fault that may time out at the client", Tolerance: true},
		},
		Needs: NeedsFaultEffect | NeedsLoad,
		Judge: judgeShedsExcessLoad,
	})
}

func judgeShedsExcessLoad(in Input) Result {
	minGoodput := in.Params.Float("goodput", 0.5)
	maxTimeouts := in.Params.Float("max-timeouts", 0.01)
	r := Result{Status: Pass, Expected: fmt.Sprintf("during the fault: goodput ≥ %.0f%% of the capacity measured outside it; ≤ %.1f%% of its requests time out at the client",
		100*minGoodput, 100*maxTimeouts)}
	active, _ := in.selectedFaults()
	if len(active) == 0 {
		r.nothingToJudge("no fault was injected: nothing to judge")
		return r
	}
	reqs := in.sortedRequests()
	var observed []string
	for _, f := range active {
		if f.End-f.Start < 2*time.Second {
			r.add(atEntry(f.Start, f.StartSeq, "%s lasted %s: too short to measure goodput per second", f.Type, dur(f.End-f.Start)))
			continue
		}
		r.window("goodput held, excess rejected", "", f.Start, f.End, r.Expected)
		// Goodput: successful completions per whole second of the fault.
		n := int((f.End - f.Start) / time.Second)
		bins := make([]int, n)
		sent, timedOut, rejected := 0, 0, 0
		var rejectLatencies []time.Duration
		var firstTimeout *timeline.Request
		for i := range reqs {
			q := reqs[i]
			if q.OK() {
				done := q.T + q.Latency
				if done >= f.Start && done < f.Start+time.Duration(n)*time.Second {
					bins[(done-f.Start)/time.Second]++
				}
			}
			if q.T < f.Start || q.T >= f.End {
				continue
			}
			sent++
			switch {
			case q.Error == timeline.ErrTimeout:
				timedOut++
				if firstTimeout == nil {
					firstTimeout = &reqs[i]
				}
			case !q.OK():
				rejected++
				rejectLatencies = append(rejectLatencies, q.Latency)
			}
		}
		if sent == 0 {
			r.add(atEntry(f.Start, f.StartSeq, "%s: no request was sent during the fault", f.Type))
			continue
		}
		total := 0
		for _, b := range bins {
			total += b
		}
		mean := float64(total) / float64(n)
		timeoutShare := float64(timedOut) / float64(sent)
		var rejectP99 time.Duration
		if len(rejectLatencies) > 0 {
			slices.Sort(rejectLatencies)
			rejectP99 = rejectLatencies[(len(rejectLatencies)*99)/100]
		}
		r.figure("goodput_rps", mean)
		r.figure("fault_peak_rps", peakRate(bins, capacityWindow))
		r.figure("timeouts", float64(timedOut))
		r.figure("timeout_share", timeoutShare)
		r.figure("rejected", float64(rejected))
		r.figure("reject_p99_s", secs(rejectP99))
		outcome := fmt.Sprintf("%d of %d requests timed out (%.1f%%), %d rejected (p99 %s)", timedOut, sent, 100*timeoutShare, rejected, dur(rejectP99))
		c := in.capacityOutside(f, reqs)
		if c.rps == 0 {
			observed = append(observed, fmt.Sprintf("%s: goodput %.0f/s, not judged: %s; %s", f.Type, mean, c.basis, outcome))
			r.unshown(fmt.Sprintf("%s: goodput %.0f/s could not be judged: %s (a scenario whose overload names capacity-multiple measures it first)", f.Type, mean, c.basis))
		} else {
			ratio := mean / c.rps
			r.figure("capacity_rps", c.rps)
			r.figure(c.figure, c.rps)
			r.figure("goodput_ratio", ratio)
			r.measure("goodput share of capacity", "ratio", AtLeast, ratio, minGoodput)
			observed = append(observed, fmt.Sprintf("%s: goodput %.0f/s = %.0f%% of capacity %.0f/s (%s); %s",
				f.Type, mean, 100*ratio, c.rps, c.basis, outcome))
			if ratio < minGoodput {
				r.add(atTime(f.End, "%s: goodput collapsed to %.0f%% of the capacity measured outside the fault (%.0f/s mean of %.0f/s, %s; per second: %v)",
					f.Type, 100*ratio, mean, c.rps, c.basis, bins))
				r.failAt(f.End)
			}
		}
		if timeoutShare > maxTimeouts && firstTimeout != nil {
			r.add(atRequest(*firstTimeout, "%s: %d of %d requests sent during the fault timed out at the client (first at %s): the excess was queued, not rejected",
				f.Type, timedOut, sent, dur(firstTimeout.T)))
			r.failAt(firstTimeout.T)
		}
	}
	if len(observed) == 0 {
		r.nothingToJudge("no fault long enough to judge goodput: nothing to judge")
		return r
	}
	r.Observed = strings.Join(observed, "; ")
	return r
}

// capacityWindow is how many consecutive seconds goodput is averaged over when a peak is taken:
// one second's completions can bunch up (a burst released at once), three cannot by much.
const capacityWindow = 3

// outsideCapacity is the capacity a fault's goodput is judged against, measured outside the fault:
// rps (0 when none was), basis saying where it came from (or why there is none) and figure the
// name of the figure that carries it by its source.
type outsideCapacity struct {
	rps    float64
	basis  string
	figure string
}

// capacityOutside measures the target's capacity outside fault f: the held rate of the latest
// capacity search before it, else the best capacityWindow consecutive seconds of goodput (reqs,
// sorted by start) in the whole seconds before it, counted back from its start to the load's start
// or to the end of an earlier fault, whichever is later.
func (in Input) capacityOutside(f timeline.FaultWindow, reqs []timeline.Request) outsideCapacity {
	var search *timeline.CapacitySearch
	for _, e := range in.Entries {
		if e.Kind == timeline.KindCapacity && e.Capacity != nil && e.Capacity.Rate > 0 && e.T <= f.Start {
			search = e.Capacity
		}
	}
	if search != nil {
		basis := "the capacity search's held rate, measured before the load"
		if !search.Saturated {
			basis += "; a lower bound: the target held every rate the search tried"
		}
		return outsideCapacity{rps: search.Rate, basis: basis, figure: "capacity_search_rps"}
	}
	from, ok := in.loadSpan()
	if !ok {
		return outsideCapacity{basis: "no capacity search ran and no load ran before the fault"}
	}
	lo := from.Start
	for _, g := range in.faults() {
		if !g.Skipped && g.Start < f.Start {
			lo = max(lo, g.End)
		}
	}
	n := 0
	if lo < f.Start {
		n = int((f.Start - lo) / time.Second)
	}
	if n < capacityWindow {
		return outsideCapacity{basis: fmt.Sprintf("no capacity search ran, and the load ran %s before the fault outside other faults (under the %d s a capacity needs)",
			dur(max(f.Start-lo, 0)), capacityWindow)}
	}
	bins := make([]int, n)
	first := f.Start - time.Duration(n)*time.Second
	for _, q := range reqs {
		if done := q.End(); q.OK() && done >= first && done < f.Start {
			bins[(done-first)/time.Second]++
		}
	}
	peak := peakRate(bins, capacityWindow)
	if peak == 0 {
		return outsideCapacity{basis: fmt.Sprintf("no capacity search ran, and no request succeeded in the %d s before the fault", n)}
	}
	return outsideCapacity{rps: peak, figure: "prefault_peak_rps",
		basis: fmt.Sprintf("the load's best %d s of goodput in the %d s before the fault; a lower bound: the target served the load's own rate there", capacityWindow, n)}
}

// peakRate is the highest mean of w consecutive bins (of all of them when there are fewer).
func peakRate(bins []int, w int) float64 {
	w = min(w, len(bins))
	best, sum := 0, 0
	for i, b := range bins {
		sum += b
		if i >= w {
			sum -= bins[i-w]
		}
		if i >= w-1 {
			best = max(best, sum)
		}
	}
	return float64(best) / float64(w)
}
