package verdict

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/oracle"
)

func init() {
	Register(Rule{
		Name:  "no-endpoint-churn",
		Title: "A flapping dependency does not turn into endpoint churn",
		Doc: "The scenario's faults are one flapping episode. From the first fault's start to the last fault's end plus " +
			"the oracle's readiness recovery deadline, each pod may leave rotation, come back and leave again (an " +
			"out→in→out cycle) at most max-cycles times. The probe's thresholds alone let a pod back in within S × P of " +
			"every gap and out again with the next drop; hysteresis (the app holding the pod out until the dependency has " +
			"stayed good for longer than the flapping's gaps) keeps it out after the first repeat. A departure that is " +
			"not readiness's (a removal, termination, exit or restart) is no cycle. Fewer than two faults cannot flap: " +
			"INCONCLUSIVE.",
		Params: []ParamSpec{
			{Name: "fault", Kind: KindList, Doc: "the faults of the flapping episode (names or types); default every fault"},
			{Name: "max-cycles", Kind: KindInt, Default: "1", Doc: "out→in→out cycles allowed per pod: the first return cannot know the dependency flaps (more is a tolerance)",
				Loosens: func(v string) bool { n, err := strconv.Atoi(v); return err != nil || n > 1 }},
		},
		Allowances: []string{oracle.AllowancePropagation},
		Needs:      NeedsFaultEffect | NeedsEndpoints,
		Judge:      judgeNoEndpointChurn,
	})
}

func judgeNoEndpointChurn(in Input) Result {
	faults, skipped := in.selectedFaults()
	if len(faults) == 0 && len(skipped) > 0 {
		return skippedResult(skipped)
	}
	allowed := in.Params.Int("max-cycles", 1)
	r := Result{Status: Pass}
	if len(faults) < 2 {
		r.Expected = fmt.Sprintf("≤ %d out→in→out cycles per pod over a flapping episode", allowed)
		r.nothingToJudge(fmt.Sprintf("%d fault: a flapping episode needs at least two", len(faults)))
		return r
	}
	from, last := faults[0].Start, faults[0].End
	for _, f := range faults {
		from, last = min(from, f.Start), max(last, f.End)
	}
	settle, basis := in.Oracle.Propagation, "propagation "+dur(in.Oracle.Propagation)
	thresholds := ""
	if rd := in.Oracle.Readiness; rd != nil {
		settle, basis = rd.Recovery.Deadline(), rd.Recovery.Explain
		thresholds = fmt.Sprintf("; the probe's thresholds alone (F=%d, S=%d × P=%s) let a pod back in within %s of every gap and out again with the next drop",
			rd.Probe.FailureThreshold, rd.Probe.SuccessThreshold, rd.Probe.Period, dur(rd.Recovery.Deadline()))
	}
	to := last + settle
	r.Expected = fmt.Sprintf("≤ %d out→in→out cycles per pod from %s to %s (%d faults, the last ending at %s, + the readiness recovery deadline %s)%s",
		allowed, dur(from), dur(to), len(faults), dur(last), dur(settle), thresholds)
	r.window("flapping", "", from, to, basis)
	if in.Oracle.Readiness == nil {
		r.unshown("the target has no readiness probe: nothing takes a pod out of rotation, so churn cannot show")
		return r
	}

	eps := buildEndpoints(in.Entries)
	pods := buildPods(in.Entries)
	var observed []string
	worst, transitions := 0, 0
	failAt, failed := time.Duration(0), false
	for _, pod := range eps.Pods {
		prev := eps.At(pod, from)
		out := !prev.InRotation() // out of rotation at some point of the episode so far
		var backAt time.Duration
		backSeen := false
		cycles, moves := 0, 0
		for _, s := range eps.ByPod[pod] {
			if s.T <= from || s.T > to {
				continue
			}
			now, was := s.InRotation(), prev.InRotation()
			prev = s
			switch {
			case now && !was:
				moves++
				backAt, backSeen = s.T, true
			case !now && was:
				moves++
				if _, other := notByReadiness(s, pods[pod], from, in.Oracle.Propagation); other {
					out, backSeen = false, false // a restart or removal starts the pod afresh
					continue
				}
				if out && backSeen {
					cycles++
					r.add(atEntry(s.T, s.Seq, "%s back in rotation at %s, out again %s later at %s (cycle %d)", pod, dur(backAt), dur(s.T-backAt), dur(s.T), cycles))
					if cycles == allowed+1 && (!failed || s.T < failAt) {
						failAt, failed = s.T, true
					}
				}
				out, backSeen = true, false
			}
		}
		transitions += moves
		worst = max(worst, cycles)
		if moves == 0 {
			continue
		}
		if cycles > allowed {
			r.add(atTime(to, "%s: %d out→in→out cycles during the flapping, %d rotation changes (allowed %d cycles): ENDPOINT CHURN", pod, cycles, moves, allowed))
		}
		observed = append(observed, fmt.Sprintf("%s: %d cycles, %d rotation changes", pod, cycles, moves))
	}
	if failed {
		r.failAt(failAt)
	}
	if len(observed) == 0 {
		observed = append(observed, "no pod left or re-entered rotation during the flapping")
	}
	r.Observed = strings.Join(observed, "; ")
	r.figure("max_cycles", float64(worst))
	r.measure("out→in→out cycles of a pod", "cycles", AtMost, float64(worst), float64(allowed))
	r.figure("rotation_changes", float64(transitions))
	return r
}
