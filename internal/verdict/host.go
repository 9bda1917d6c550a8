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

// hostCaveat qualifies a verdict reached while the machine running the cluster was starved for CPU;
// the status stands either way. A FAIL keeps its evidence, with a caveat saying the machine may have
// caused it: it reads the host samples of the 10 s before the failure's moment, or of the judged
// span when the rule names no moment. A PASS gets a caveat when some 10 s stretch of the judged span
// was starved: the load, probes and kube-proxy may have run thin or late there, so the PASS may
// rest on less than the scenario asked. Without host samples (a remote cluster) it says nothing.
func hostCaveat(in Input, res *Result) {
	switch res.Status {
	case Fail:
	case Pass:
		passCaveat(in, res)
		return
	default:
		return
	}
	var from, to time.Duration
	switch span, ok := in.judgedSpan(); {
	case res.At != nil:
		from, to = *res.At-starvedLookback, *res.At
	case ok:
		from, to = span.Start, span.End
	default:
		return
	}
	h := timeline.HostOver(in.Entries, from, to)
	if h.Observed == 0 || h.Waiting < StarvedWaiting {
		return
	}
	res.Caveats = append(res.Caveats, fmt.Sprintf(
		"the host was starved for CPU at %s–%s: some task waited for a CPU %.0f %% of the time (up to %d runnable on %d CPUs); "+
			"probes, kube-proxy and the load may have run late there whatever the target did: re-run on a quieter machine (or with --parallel 1) before blaming the target",
		dur(max(from, 0)), dur(to), h.Waiting*100, h.Runnable, h.CPUs))
}

// passCaveat qualifies a PASS whose judged span holds a starved 10 s stretch (the worst one, read in
// 1 s steps).
func passCaveat(in Input, res *Result) {
	span, ok := in.judgedSpan()
	if !ok {
		return
	}
	var worst timeline.HostStretch
	var worstTo time.Duration
	for to := min(span.Start+starvedLookback, span.End); ; to += time.Second {
		to = min(to, span.End)
		if h := timeline.HostOver(in.Entries, to-starvedLookback, to); h.Observed > 0 && h.Waiting > worst.Waiting {
			worst, worstTo = h, to
		}
		if to >= span.End {
			break
		}
	}
	if worst.Observed == 0 || worst.Waiting < StarvedWaiting {
		return
	}
	res.Caveats = append(res.Caveats, fmt.Sprintf(
		"the host was starved for CPU at %s–%s: some task waited for a CPU %.0f %% of the time (up to %d runnable on %d CPUs); "+
			"the load, probes and kube-proxy may have run thin or late there, so this PASS may rest on less than the scenario asks: re-run on a quieter machine (or with --parallel 1) to trust it",
		dur(max(worstTo-starvedLookback, 0)), dur(worstTo), worst.Waiting*100, worst.Runnable, worst.CPUs))
}
