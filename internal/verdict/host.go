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

// hostCaveat qualifies a FAIL that happened while the machine running the cluster was starved for
// CPU: the failure stands (its evidence is real), with a caveat saying the machine may have caused
// it. It reads the host samples of the 10 s before the failure's moment, or of the judged span when
// the rule names no moment; without host samples (a remote cluster) it says nothing.
func hostCaveat(in Input, res *Result) {
	if res.Status != Fail {
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
