package verdict

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "readiness-withdrawn-in-window",
		Title: "The faulted pods' endpoints go ready=false within the readiness window",
		Doc: "For each fault, each target pod's endpoint must turn ready=false within the oracle's readiness " +
			"detection window after the fault starts (plus propagation), by readiness: the container still running " +
			"and the pod not terminating (a crash, a restart or a deletion is not a withdrawal). With hold (the " +
			"default) it must stay withdrawn while the fault lasts, less the hysteresis successThreshold × period " +
			"allows; coming back earlier is flapping.",
		Params: []ParamSpec{
			{Name: "fault", Kind: KindList, Doc: "judge only these faults (names or types); default every fault"},
			{Name: "pods", Kind: KindList, Doc: "target pods; default the fault's pods, else every pod ready when it starts"},
			{Name: "min-withdrawn", Kind: KindInt, Doc: "how many target pods must withdraw in window; default all (any value given is a tolerance; 0 is refused)",
				Loosens: anyValue, Vacuous: vacuousAt("no pod need withdraw")},
			{Name: "within", Kind: KindDuration, Doc: "override the window's deadline (offset from the fault start)", Tolerance: true},
			{Name: "tolerance", Kind: KindDuration, Default: "250ms", Doc: "clock slack before the window's start", Tolerance: true},
			{Name: "hold", Kind: KindBool, Default: "true", Doc: "the pod must stay withdrawn while the fault lasts (false is a tolerance)", Loosens: isFalse},
		},
		Allowances: []string{oracle.AllowancePropagation},
		Needs:      NeedsFaultEffect | NeedsEndpoints,
		Judge:      judgeReadinessWithdrawn,
	})
}

func judgeReadinessWithdrawn(in Input) Result {
	faults, skipped := in.selectedFaults()
	if len(faults) == 0 && len(skipped) > 0 {
		return skippedResult(skipped)
	}
	r := Result{Status: Pass}
	if in.Oracle.Readiness == nil {
		r.Expected = "the faulted pods' endpoints withdrawn by readiness"
		r.Observed = "the target has no readiness probe: nothing withdraws a failing pod"
		r.failAt(0)
		return r
	}
	w := in.Oracle.Readiness.Detection
	deadline := in.Params.Duration("within", w.Deadline())
	tol := in.Params.Duration("tolerance", 250*time.Millisecond)
	r.Expected = fmt.Sprintf("endpoint ready=false %s–%s after the fault starts %s", dur(w.Min), dur(deadline), windowWords(w))
	if len(faults) == 0 {
		r.nothingToJudge("no fault was injected: nothing to judge")
		return r
	}
	eps := buildEndpoints(in.Entries)
	pods := buildPods(in.Entries)
	hold := in.Params.Bool("hold", true)
	hysteresis := time.Duration(max(in.Oracle.Readiness.Probe.SuccessThreshold, 1)) * in.Oracle.Readiness.Probe.Period
	var observed []string
	var worst float64
	var why []Evidence // the kubelet's words, listed after the withdrawals
	for _, f := range faults {
		targets := faultTargets(in, f, eps)
		need := in.Params.Int("min-withdrawn", len(targets))
		if need > len(targets) {
			need = len(targets)
		}
		if len(targets) == 0 {
			r.failAt(f.Start)
			r.add(atEntry(f.Start, f.StartSeq, "%s: no pod to judge (none named, none ready)", f.Type))
			observed = append(observed, f.Type+": no target pod")
			continue
		}
		inWindow, tooShort := 0, 0
		var delays []time.Duration // the readiness withdrawals' delays, for the measure
		// A fault shorter than the probe's longest detection time may end before a pod's probe
		// has failed often enough: its not withdrawing then shows nothing either way. So does an
		// overload the target kept up with: an instance that is not saturated owes no withdrawal.
		short := f.Reverted && f.End-f.Start < w.Max
		unsaturated := ""
		if f.Type == overloadFault {
			if shown, note := saturation(in.Requests, f); !shown {
				short, unsaturated = true, note
			}
		}
		for _, pod := range targets {
			r.window("readiness withdrawal", pod, f.Start+w.Min, f.Start+deadline, w.Explain)
			s, ok := eps.withdrawal(pod, f.Start)
			if p, found := firstProbeFailure(in.Entries, pod, timeline.ProbeReadiness, f.Start); found && (!ok || p.T <= s.T) {
				why = append(why, atEntry(p.T, p.Seq, "%s: first readiness probe failure %s after the fault: %s", pod, dur(p.T-f.Start), p.Probe.Message))
			}
			if !ok {
				r.add(atEntry(f.Start, f.StartSeq, "%s injected; %s's endpoint never went ready=false", f.Type, pod))
				observed = append(observed, pod+": never withdrawn")
				if short {
					tooShort++
				}
				continue
			}
			d := s.T - f.Start
			worst = max(worst, secs(d))
			if why, ok := notByReadiness(s, pods[pod], f.Start, in.Oracle.Propagation); ok {
				r.add(atEntry(s.T, s.Seq, "%s left rotation %s after the fault, but not by readiness: %s", pod, dur(d), why))
				observed = append(observed, fmt.Sprintf("%s: %s, not withdrawn by readiness", pod, why))
				continue
			}
			if back, ok := eps.readyAgain(pod, s.T+1); ok && hold && f.Reverted && back.T < f.End-hysteresis && d+tol >= w.Min && d <= deadline &&
				!replaced(pods[pod], s.T, back.T) {
				r.add(atEntry(back.T, back.Seq, "%s withdrawn %s after the fault but ready again at %s, %s before the fault ended (hysteresis allows %s): FLAPPING",
					pod, dur(d), dur(back.T), dur(f.End-back.T), dur(hysteresis)))
				observed = append(observed, fmt.Sprintf("%s flapped back to ready mid-fault", pod))
				continue
			}
			delays = append(delays, d)
			switch {
			case d+tol < w.Min:
				r.add(atEntry(s.T, s.Seq, "%s withdrawn %s after the fault: EARLIER than the probe allows", pod, dur(d)))
			case d > deadline:
				r.add(atEntry(s.T, s.Seq, "%s withdrawn %s after the fault: LATE (deadline %s)", pod, dur(d), dur(deadline)))
			default:
				inWindow++
				r.add(atEntry(s.T, s.Seq, "%s withdrawn %s after the fault (in window)", pod, dur(d)))
			}
			observed = append(observed, fmt.Sprintf("%s withdrawn after %s", pod, dur(d)))
		}
		// The quantity judged is the need-th quickest withdrawal (the slowest when every pod must
		// withdraw): a pod beyond min-withdrawn that withdrew late is not what the verdict rests on.
		if len(delays) > 0 {
			slices.Sort(delays)
			d := delays[len(delays)-1]
			if need > 0 && need <= len(delays) {
				d = delays[need-1]
			}
			r.measure("readiness withdrawal after the fault", "s", AtMost, secs(d), secs(deadline))
		}
		switch {
		case inWindow >= need:
		case inWindow+tooShort >= need && unsaturated != "":
			r.unshown(fmt.Sprintf("%s did not saturate the target (%s): %d pods that never withdrew show nothing; "+
				"a higher overload rate would judge them", f.Type, unsaturated, tooShort))
		case inWindow+tooShort >= need:
			r.unshown(fmt.Sprintf("%s lasted %s, less than the %s the target's readiness probe may take to notice it (%s): "+
				"%d pods that never withdrew show nothing; lengthen the fault to judge them", f.Type, dur(f.End-f.Start), dur(w.Max), w.Explain, tooShort))
		default:
			r.failAt(f.Start + deadline)
		}
		observed = append(observed, fmt.Sprintf("%s: %d of %d target pods withdrawn in window (need %d)", f.Type, inWindow, len(targets), need))
	}
	for _, ev := range why {
		r.add(ev)
	}
	r.Observed = strings.Join(observed, "; ")
	r.figure("withdrawn_after_s", worst)
	r.figure("window_deadline_s", secs(deadline))
	return r
}

// faultTargets is the pods a readiness rule judges for fault f: the "pods" parameter, else the
// fault's pods, else every pod whose endpoint was ready when the fault started.
func faultTargets(in Input, f timeline.FaultWindow, eps endpointHistory) []string {
	if p := in.Params.List("pods"); len(p) > 0 {
		return p
	}
	if len(f.Pods) > 0 {
		return f.Pods
	}
	return eps.ReadyAt(f.Start)
}

// notByReadiness says why a pod's departure from rotation at s was not a readiness withdrawal: its
// endpoint was removed or terminating, or its container had exited (a crash or a kill shows as a
// terminated state, or as a restart whose finishedAt or observation lies between the fault's start
// and propagation after the endpoint changed).
func notByReadiness(s timeline.EndpointStep, p *podLife, faultStart, propagation time.Duration) (string, bool) {
	switch {
	case !s.Present:
		return "its endpoint was removed", true
	case s.Terminating:
		return "it was terminating", true
	}
	if p == nil {
		return "", false
	}
	if p.Deleting != nil && p.Deleting.T <= s.T {
		return fmt.Sprintf("it was being deleted (from %s)", dur(p.Deleting.T)), true
	}
	for _, x := range p.Exits {
		if x.T >= faultStart && x.T <= s.T+propagation {
			return fmt.Sprintf("its container %s exited at %s (%s)", x.Container, dur(x.T), x.Reason), true
		}
	}
	// A crash the kubelet restarts at once can reach the API coalesced (running → running, not
	// ready, restartCount + 1): no terminated state is seen, only the restart, whose finishedAt
	// (truncated to the second) says when the process ended.
	for _, e := range p.Restarts {
		from, to := e.T, e.T
		if fin, ok := restartFinished(e); ok {
			from, to = fin, fin+time.Second
		}
		if (to >= faultStart && from <= s.T+propagation) || (e.T >= faultStart && e.T <= s.T+propagation) {
			return fmt.Sprintf("its container %s restarted (#%d, seen at %s, %s)", e.Restart.Container, e.Restart.RestartCount, dur(e.T), e.Restart.Cause), true
		}
	}
	return "", false
}

// restartFinished is when restart e's previous container finished by its status's finishedAt, on
// the timeline's clock.
func restartFinished(e timeline.Entry) (time.Duration, bool) {
	switch {
	case e.APITime != nil && !e.At.IsZero():
		return apiOffset(e), true
	case e.Restart.FinishedAt != nil && !e.At.IsZero():
		return e.T + e.Restart.FinishedAt.Sub(e.At), true
	}
	return 0, false
}

// replaced reports whether the pod's container exited or restarted in (from, to]: a new process
// is not the faulted one, so its coming back is recovery, not flapping.
func replaced(p *podLife, from, to time.Duration) bool {
	if p == nil {
		return false
	}
	for _, x := range p.Exits {
		if x.T > from && x.T <= to {
			return true
		}
	}
	for _, e := range p.Restarts {
		if e.T > from && e.T <= to {
			return true
		}
	}
	return false
}
