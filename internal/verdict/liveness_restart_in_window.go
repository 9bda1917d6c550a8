package verdict

import (
	"fmt"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "liveness-restart-in-window",
		Title: "The stalled pod is restarted by liveness within its window, and no other pod is",
		Doc: "For each faulted pod, the first liveness restart after the fault starts must fall in the oracle's " +
			"liveness restart window; each fault accounts for that one restart of each of its pods. Any other liveness " +
			"restart fails: of another pod, or of a faulted pod again (a restart loop: the new process was never faulted).",
		Params: []ParamSpec{
			{Name: "fault", Kind: KindList, Doc: "judge only these faults (names or types); default every fault"},
			{Name: "pods", Kind: KindList, Doc: "the pods expected to restart; default the faults' pods"},
			{Name: "within", Kind: KindDuration, Doc: "override the window's deadline (offset from the fault start)", Tolerance: true},
		},
		Allowances: []string{oracle.AllowanceRestart},
		Needs:      NeedsFaultEffect | NeedsRestarts,
		Judge:      judgeLivenessRestartInWindow,
	})
}

func judgeLivenessRestartInWindow(in Input) Result {
	faults, skipped := in.selectedFaults()
	if len(faults) == 0 && len(skipped) > 0 {
		return skippedResult(skipped)
	}
	r := Result{Status: Pass}
	if in.Oracle.Liveness == nil {
		r.Expected = "a liveness restart of the faulted pod"
		r.Observed = "the target has no liveness probe: nothing can restart a stalled process"
		r.failAt(0)
		return r
	}
	w := in.Oracle.Liveness.Restart
	deadline := in.Params.Duration("within", w.Deadline())
	r.Expected = fmt.Sprintf("the faulted pod restarted with cause liveness %s–%s after the fault starts %s; no other pod restarted by liveness",
		dur(w.Min), dur(deadline), windowWords(w))
	if len(faults) == 0 {
		r.nothingToJudge("no fault was injected: nothing to judge")
		return r
	}

	expected := map[string]bool{}
	accounted := map[int64]bool{} // the restart each fault and pod accounts for, by Seq
	var observed []string
	var worst float64
	for _, f := range faults {
		pods := in.Params.List("pods")
		if len(pods) == 0 {
			pods = f.Pods
		}
		if len(pods) == 0 {
			r.failAt(f.Start)
			r.add(atEntry(f.Start, f.StartSeq, "%s names no pod: cannot tell which pod should restart", f.Type))
			observed = append(observed, f.Type+": no faulted pod")
			continue
		}
		for _, pod := range pods {
			expected[pod] = true
			from, to := f.Start+w.Min, f.Start+deadline
			r.window("liveness restart", pod, from, to, w.Explain)
			e, ok := firstRestart(in.Entries, pod, timeline.CauseLiveness, f.Start, accounted)
			if ok {
				accounted[e.Seq] = true
			}
			switch {
			case !ok:
				r.failAt(to)
				r.add(atEntry(f.Start, f.StartSeq, "%s injected on %s; no liveness restart followed", f.Type, pod))
				observed = append(observed, pod+": never restarted by liveness")
			default:
				d := e.T - f.Start
				worst = max(worst, secs(d))
				r.measure("liveness restart after the fault", "s", AtMost, secs(d), secs(deadline))
				note := "in window"
				switch {
				case d < w.Min:
					note = "EARLIER than the probe allows"
					r.failAt(e.T)
				case d > deadline:
					note = "LATE"
					r.failAt(e.T)
				}
				r.add(atEntry(e.T, e.Seq, "%s restarted by liveness %s after the fault (%s)", pod, dur(d), note))
				observed = append(observed, fmt.Sprintf("%s restarted %s after the fault", pod, dur(d)))
			}
		}
	}
	others, again := 0, 0
	for _, e := range in.Entries {
		if e.Kind != timeline.KindRestart || e.Restart == nil || e.Restart.Cause != timeline.CauseLiveness || accounted[e.Seq] {
			continue
		}
		r.failAt(e.T)
		if expected[e.Pod] {
			again++
			r.add(atEntry(e.T, e.Seq, "%s restarted by liveness again (#%d), %s: no fault accounts for it (a restart loop?)",
				e.Pod, e.Restart.RestartCount, dur(e.T)))
		} else {
			others++
			r.add(atEntry(e.T, e.Seq, "%s (not faulted) restarted by liveness", e.Pod))
		}
		r.explainRestart(in.Entries, e)
	}
	if again > 0 {
		observed = append(observed, fmt.Sprintf("%d further liveness restarts of the faulted pods", again))
	}
	observed = append(observed, fmt.Sprintf("%d liveness restarts of other pods", others))
	r.Observed = strings.Join(observed, "; ")
	r.figure("restart_after_s", worst)
	r.figure("window_deadline_s", secs(deadline))
	r.figure("other_liveness_restarts", float64(others))
	r.figure("further_liveness_restarts", float64(again))
	return r
}

// firstRestart returns pod's first restart with the given cause at or after t, skipping those
// whose Seq is in taken.
func firstRestart(entries []timeline.Entry, pod string, cause timeline.RestartCause, t time.Duration, taken map[int64]bool) (timeline.Entry, bool) {
	for _, e := range entries {
		if e.Kind == timeline.KindRestart && e.Restart != nil && e.Pod == pod && e.Restart.Cause == cause && e.T >= t && !taken[e.Seq] {
			return e, true
		}
	}
	return timeline.Entry{}, false
}
