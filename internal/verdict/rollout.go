package verdict

import (
	"fmt"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
)

// rolloutFaults are the fault types that roll the Deployment to a new pod template. They are
// recovered from when the rollout completes; a revert (cold-start's restore at the load's end) is a
// second rollout, not the end of the first.
var rolloutFaults = map[string]bool{"cold-start": true, "rolling-update": true}

// judgeRollout judges recovery from rollout fault f: the first moment after the inject, and before
// the revert when there is one, at which at least as many endpoints are in rotation as before the
// fault and every one of them is a pod created by the rollout (created at or after the inject and
// before the revert). It returns the expected and observed words and, when it completed, how long
// the rollout took.
func judgeRollout(in Input, r *Result, eps endpointHistory, steps []readyStep, horizon time.Duration, f timeline.FaultWindow) (expected, observed string, took time.Duration) {
	pods := buildPods(in.Entries)
	need := in.Params.Int("replicas", baseline(in, eps, steps, f.Start))
	within, basis, bounded := rolloutBound(in, pods, f, need)
	expected = fmt.Sprintf("%s: rollout complete (%d ready endpoints, every one a pod the rollout created) ≤ %s after the fault (%s)", f.Type, need, dur(within), basis)
	if !bounded {
		expected = fmt.Sprintf("%s: rollout complete (%d ready endpoints, every one a pod the rollout created) (%s)", f.Type, need, basis)
	}
	r.window("recovery", "", f.Start, f.Start+within, basis)
	if need == 0 {
		r.failAt(f.Start)
		r.add(atEntry(f.Start, f.StartSeq, "%s: no endpoint was ready before the fault", f.Type))
		return expected, f.Type + ": no ready endpoint before the fault to recover to", 0
	}
	// The judged span ends at the run's end, or at the revert: from then on the Deployment rolls back.
	until, cut := horizon, "the run ended"
	if f.Reverted && f.End < until {
		until, cut = f.End, "the fault was reverted"
	}
	isNew := rolloutCreated(pods, f)
	if s, ok := rolloutComplete(steps, f, need, until, isNew); ok {
		fresh := len(s.Ready)
		took = s.T - f.Start
		if bounded {
			r.measure("recovery time", "s", AtMost, secs(took), secs(within))
		}
		note := fmt.Sprintf("rollout complete %s after the fault: %d ready endpoints, all new pods", dur(took), fresh)
		if bounded && took > within {
			r.failAt(s.T)
			note += " (LATE)"
		}
		r.add(atEntry(s.T, s.Seq, "%s: %s (%s)", f.Type, note, strings.Join(s.Ready, ", ")))
		return expected, f.Type + ": " + note, took
	}
	// Not complete. A new pod that passed its startup probe and was not in rotation within the
	// readiness recovery window after it stalled the rollout; past the bound the rollout is late.
	observed = fmt.Sprintf("%s: rollout not complete when %s, %s after the fault (%d of %d endpoints new at %s)",
		f.Type, cut, dur(until-f.Start), newReady(eps.ReadyAt(until), isNew), need, dur(until))
	failed := false
	readyBy, readyWords := readyAfterStartup(in)
	for _, name := range sortedPodNames(pods) {
		p := pods[name]
		st, ok := p.Started[in.Oracle.Container]
		if !isNew(name) || !ok || st.T+readyBy > until || (p.Deleting != nil && p.Deleting.T <= st.T+readyBy) {
			continue
		}
		if back, ok := eps.readyAgain(name, st.T); ok && back.T <= st.T+readyBy {
			continue
		}
		r.failAt(st.T + readyBy)
		r.add(atEntry(st.T, st.Seq, "%s: %s passed its startup probe but was not in rotation %s later (%s): the rollout stalled", f.Type, name, dur(readyBy), readyWords))
		failed = true
	}
	if bounded && until >= f.Start+within {
		r.failAt(f.Start + within)
		r.add(atTime(f.Start+within, "%s: rollout not complete by its bound, %s after the fault", f.Type, dur(within)))
		return expected, observed + "; not complete by its bound", 0
	}
	if failed {
		return expected, observed + "; stalled", 0
	}
	why := fmt.Sprintf("%s: %s %s after the fault, before its rollout completed or its bound of %s passed: the run was too short to tell whether it completes", f.Type, cut, dur(until-f.Start), dur(within))
	if !bounded {
		why = fmt.Sprintf("%s: %s %s after the fault, before its rollout completed, and nothing bounds the bootstrap: the run was too short to tell whether it completes", f.Type, cut, dur(until-f.Start))
	}
	r.unshown(why)
	return expected, observed, 0
}

func newReady(ready []string, isNew func(string) bool) int {
	n := 0
	for _, p := range ready {
		if isNew(p) {
			n++
		}
	}
	return n
}

// rolloutCreated reports whether a pod is one rollout fault f created: at or after the inject and,
// when it was reverted, before the revert.
func rolloutCreated(pods map[string]*podLife, f timeline.FaultWindow) func(string) bool {
	return func(name string) bool {
		p := pods[name]
		return p != nil && p.Created != nil && p.Created.T >= f.Start && (!f.Reverted || p.Created.T < f.End)
	}
}

// rolloutComplete returns the first ready step after f's inject, up to until, at which at least
// need endpoints are in rotation and every one is a pod the rollout created.
func rolloutComplete(steps []readyStep, f timeline.FaultWindow, need int, until time.Duration, isNew func(string) bool) (readyStep, bool) {
	for _, s := range steps {
		if s.T <= f.Start || s.T > until {
			continue
		}
		if fresh := newReady(s.Ready, isNew); fresh >= need && fresh == len(s.Ready) {
			return s, true
		}
	}
	return readyStep{}, false
}

// RolloutsComplete reports whether every rollout fault (cold-start, rolling-update) recorded on
// entries so far has completed as recovery-within judges one (as many endpoints in rotation as the
// most at once from loadStart to the inject, every one a pod the rollout created), and how many
// were recorded. The runner asks it while the load runs, to end a load sized to cover the
// rollout's bound once there is nothing left to see.
func RolloutsComplete(entries []timeline.Entry, loadStart time.Duration) (recorded int, complete bool) {
	eps := buildEndpoints(entries)
	steps := eps.steps()
	pods := buildPods(entries)
	in := Input{Entries: entries, Load: Span{Start: loadStart, End: loadStart + 1}}
	horizon := time.Duration(0)
	if n := len(entries); n > 0 {
		horizon = entries[n-1].T
	}
	complete = true
	for _, f := range timeline.FaultWindows(entries) {
		if !rolloutFaults[f.Type] || f.Skipped {
			continue
		}
		recorded++
		need := baseline(in, eps, steps, f.Start)
		until := horizon
		if f.Reverted && f.End < until {
			until = f.End
		}
		if _, ok := rolloutComplete(steps, f, need, until, rolloutCreated(pods, f)); need == 0 || !ok {
			complete = false
		}
	}
	return recorded, complete
}

// readyAfterStartup is how long after its startup probe passes a pod's endpoint must be in rotation:
// the readiness probe's initial delay and recovery window with propagation.
func readyAfterStartup(in Input) (time.Duration, string) {
	if rd := in.Oracle.Readiness; rd != nil {
		d := rd.Probe.InitialDelay + rd.Recovery.Deadline()
		words := rd.Recovery.Explain
		if rd.Probe.InitialDelay > 0 {
			words = fmt.Sprintf("initialDelay %s + %s", rd.Probe.InitialDelay, words)
		}
		return d, words
	}
	return in.Oracle.Propagation, "no readiness probe: propagation " + dur(in.Oracle.Propagation)
}

// rolloutBound is the "within" parameter or the oracle's bound for a rollout that replaces need
// pods one at a time (maxSurge 1, the slowest a rollout goes): per pod, the runtime's allowance to
// schedule and create its container, the startup budget, and readiness after the startup probe
// passed. Without a probe that bounds the bootstrap, the slowest boot of this run's pods before the
// fault, with a margin, stands in for the budget; bounded is false when there is neither.
func rolloutBound(in Input, pods map[string]*podLife, f timeline.FaultWindow, need int) (within time.Duration, basis string, bounded bool) {
	if in.Params.Has("within") {
		return in.Params.Duration("within", 0), "scenario bound", true
	}
	ready, readyWords := readyAfterStartup(in)
	var boot time.Duration
	var bootWords string
	if st := in.Oracle.Startup; !st.Unbounded {
		boot = oracle.DefaultRestartAllowance + st.Budget
		bootWords = fmt.Sprintf("%s to schedule and create the container + %s", oracle.DefaultRestartAllowance, st.Explain)
	} else if b, n := bootstrapBefore(pods, f.Start); n > 0 {
		boot = bootMargin(b)
		bootWords = fmt.Sprintf("no probe bounds the bootstrap: the slowest creation→ready of the %d pods ready before the fault, %s, × 1.5 + 2s", n, dur(b))
	} else {
		return 0, in.Oracle.Startup.Explain + ", and no boot measured before the fault: no bound", false
	}
	per := boot + ready
	return time.Duration(max(need, 1)) * per, fmt.Sprintf("%d pods replaced one at a time, each within %s: %s, then %s", max(need, 1), dur(per), bootWords, readyWords), true
}

// RolloutBound is recovery-within's default bound for a rollout of replicas pods on a target with
// oracle o (each replaced in turn within the restart allowance, the startup budget and the readiness
// window after it), or false when the target's probes give none. Without a startup budget, boot (the
// live pod's creation→ready, zero when unknown) stands in, as the pods' boots before the fault do
// when the rule judges.
func RolloutBound(o oracle.Oracle, replicas int, boot time.Duration) (time.Duration, bool) {
	var pods map[string]*podLife
	if boot > 0 {
		created := time.Duration(0)
		pods = map[string]*podLife{"live": {CreatedAt: &created, ReadyAt: &boot}}
	}
	within, _, bounded := rolloutBound(Input{Oracle: o}, pods, timeline.FaultWindow{Start: boot}, replicas)
	return within, bounded
}
