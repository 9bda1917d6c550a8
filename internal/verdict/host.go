package verdict

import (
	"fmt"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// StarvedWaiting is the share of time some task waited for a CPU, on average over the stretch
// before a failure, from which the host counts as starved (timeline.HostSample).
const StarvedWaiting = 0.9

// starvedLookback is the stretch before a failure's moment whose host samples are read: a late probe
// or route reflects the last few seconds' scheduling.
const starvedLookback = 10 * time.Second

// starvedLookahead is how far past a failure's moment its host samples are read: a request that
// failed was in flight from its start up to the load's timeout (5 s by default), and a starvation
// that began as it was sent is what it ran into.
const starvedLookahead = 5 * time.Second

// hostCaveat qualifies a verdict reached while the machine running the cluster was starved for CPU;
// the status stands either way. A FAIL keeps its evidence, with a caveat saying the machine may have
// caused it when some 10 s stretch from 10 s before the failure's moment to 5 s after it, or those
// 5 s alone, were starved (some 10 s of the judged span, when the rule names no moment). A PASS
// gets a caveat when some 10 s stretch of the judged span was starved: the load, probes and
// kube-proxy may have run thin or late there, so the PASS may rest on less than the scenario asked.
// Without host samples (a remote cluster) it says nothing.
func hostCaveat(in Input, res *Result) {
	var from, to time.Duration
	span, ok := in.judgedSpan()
	switch {
	case res.Status == Pass && ok:
		from, to = span.Start, span.End
	case res.Status != Fail:
		return
	case res.At != nil:
		from, to = *res.At-starvedLookback, *res.At+starvedLookahead
	case ok:
		from, to = span.Start, span.End
	default:
		return
	}
	worst, worstFrom, worstTo := worstStretch(in.Entries, from, to)
	if res.Status == Fail && res.At != nil {
		// The request's own flight, shorter than a stretch: a burst that began as it was sent.
		if h := timeline.HostOver(in.Entries, *res.At, to); h.Observed > 0 && h.Waiting > worst.Waiting {
			worst, worstFrom, worstTo = h, *res.At, to
		}
	}
	if worst.Observed == 0 || worst.Waiting < StarvedWaiting {
		return
	}
	tail := "probes, kube-proxy and the load may have run late there whatever the target did: re-run on a quieter machine (or with --parallel 1) before blaming the target"
	if res.Status == Pass {
		tail = "the load, probes and kube-proxy may have run thin or late there, so this PASS may rest on less than the scenario asks: re-run on a quieter machine (or with --parallel 1) to trust it"
	}
	res.Caveats = append(res.Caveats, fmt.Sprintf(
		"the host was starved for CPU at %s–%s: some task waited for a CPU %.0f %% of the time (up to %d runnable on %d CPUs); %s",
		dur(max(worstFrom, 0)), dur(worstTo), worst.Waiting*100, worst.Runnable, worst.CPUs, tail))
}

// worstStretch is the most starved 10 s stretch within [from, to], read in 1 s steps (one shorter
// stretch when from and to are closer than 10 s), and where it starts and ends.
func worstStretch(entries []timeline.Entry, from, to time.Duration) (worst timeline.HostStretch, worstFrom, worstTo time.Duration) {
	for end := min(from+starvedLookback, to); ; end += time.Second {
		end = min(end, to)
		start := max(end-starvedLookback, from)
		if h := timeline.HostOver(entries, start, end); h.Observed > 0 && h.Waiting > worst.Waiting {
			worst, worstFrom, worstTo = h, start, end
		}
		if end >= to {
			break
		}
	}
	return worst, worstFrom, worstTo
}
