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
			"least a fraction of the target's measured capacity — the most successful responses it completed in " +
			"any one second of the fault, averaged over its best three consecutive seconds — and the excess is rejected (an error answered at once) rather than " +
			"queued until the client gives up: at most max-timeouts of the requests sent during the fault time " +
			"out. A target that only queues collapses: every request waits longer than the client, and goodput " +
			"falls to zero while the server stays busy.",
		Params: []ParamSpec{
			{Name: "fault", Kind: KindList, Doc: "fault names or types to judge; default every fault"},
			{Name: "goodput", Kind: KindFloat, Default: "0.5", Doc: "least mean goodput over the fault, as a fraction of the measured capacity", Tolerance: true},
			{Name: "max-timeouts", Kind: KindFloat, Default: "0.01", Doc: "largest fraction of the requests sent during the fault that may time out at the client", Tolerance: true},
		},
		Needs: NeedsFaultEffect | NeedsLoad,
		Judge: judgeShedsExcessLoad,
	})
}

func judgeShedsExcessLoad(in Input) Result {
	minGoodput := in.Params.Float("goodput", 0.5)
	maxTimeouts := in.Params.Float("max-timeouts", 0.01)
	r := Result{Status: Pass, Expected: fmt.Sprintf("during the fault: goodput ≥ %.0f%% of the measured capacity; ≤ %.1f%% of its requests time out at the client",
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
		capacity, total := peakRate(bins, capacityWindow), 0
		for _, b := range bins {
			total += b
		}
		mean := float64(total) / float64(n)
		ratio := 0.0
		if capacity > 0 {
			ratio = mean / capacity
		}
		timeoutShare := float64(timedOut) / float64(sent)
		var rejectP99 time.Duration
		if len(rejectLatencies) > 0 {
			slices.Sort(rejectLatencies)
			rejectP99 = rejectLatencies[(len(rejectLatencies)*99)/100]
		}
		r.figure("capacity_rps", capacity)
		r.figure("goodput_rps", mean)
		r.figure("goodput_ratio", ratio)
		r.measure("goodput share of capacity", "ratio", AtLeast, ratio, minGoodput)
		r.figure("timeouts", float64(timedOut))
		r.figure("timeout_share", timeoutShare)
		r.figure("rejected", float64(rejected))
		r.figure("reject_p99_s", secs(rejectP99))
		line := fmt.Sprintf("%s: goodput %.0f/s = %.0f%% of capacity %.0f/s; %d of %d requests timed out (%.1f%%), %d rejected (p99 %s)",
			f.Type, mean, 100*ratio, capacity, timedOut, sent, 100*timeoutShare, rejected, dur(rejectP99))
		observed = append(observed, line)
		if capacity == 0 || ratio < minGoodput {
			r.add(atTime(f.End, "%s: goodput collapsed to %.0f%% of the capacity the target showed (%.0f/s mean of %.0f/s at best, per second: %v)",
				f.Type, 100*ratio, mean, capacity, bins))
			r.failAt(f.End)
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

// capacityWindow is how many consecutive seconds the measured capacity is averaged over: one
// second's completions can bunch up (a burst released at once), three cannot by much.
const capacityWindow = 3

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
