package runner

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/scenario"
)

// scenarioOracle is the timing oracle of the live target pod with the scenario's oracle options:
// what the faults' holds are resolved from and the verdicts are judged against.
func scenarioOracle(sc *scenario.Scenario, pod *corev1.Pod) (oracle.Oracle, error) {
	opts, err := oracle.ParseOptions(sc.Oracle)
	if err != nil {
		return oracle.Oracle{}, fmt.Errorf("%s: oracle: %w", sc.File, err)
	}
	return oracle.ForPod(pod, opts)
}

// maxHeldLoad bounds how long a load may grow to cover a held fault.
const maxHeldLoad = 5 * time.Minute

// holdUntil resolves a fault's Until from the deployed pod's own probes: the returned fault's
// Duration is that moment after the injection plus the file's Duration (the margin). When the hold
// outlasts the load, the load grows with it, keeping the stretch the file gives after the fault
// (load is the load's duration to run). It returns the fault unchanged with a skip reason instead
// when the pod's probes give no such moment or the load would grow past maxHeldLoad.
func holdUntil(sc *scenario.Scenario, f scenario.Fault, pod *corev1.Pod) (held scenario.Fault, load time.Duration, skip string) {
	load = sc.Load.Duration
	if pod == nil {
		return f, load, "no live target pod to read the probe timing from"
	}
	o, err := scenarioOracle(sc, pod)
	if err != nil {
		return f, load, fmt.Sprintf("probe timing of the target: %v", err)
	}
	switch f.Until {
	case scenario.UntilReadinessWithdrawn:
		if o.Readiness == nil {
			return f, load, "the target has no readiness probe: nothing withdraws it, so there is no moment to hold the fault until"
		}
		held = f
		hold := o.Readiness.Detection.Deadline()
		held.Duration += hold
		if held.End() > load {
			load = held.End() + max(sc.Load.Duration-f.End(), 0)
		}
		if load > maxHeldLoad {
			return f, sc.Load.Duration, fmt.Sprintf("held until readiness has withdrawn the pod at worst (%s after it starts, %s with the margin), the load would run %s, longer than the %s a held fault may stretch it to",
				hold, held.Duration, load, maxHeldLoad)
		}
		return held, load, ""
	}
	return f, load, fmt.Sprintf("unknown moment %q to hold the fault until", f.Until)
}

// sizeToTarget returns sc with every fault that says AtLeast stretched, when its file's duration is
// shorter, to last until that moment of the deployed pod's own probe timing plus
// scenario.SizingMargin: the faults after it and the load's end move by what it gained, so the
// scenario keeps its shape. A scenario that sizes any fault also gets a load that outlasts its last
// fault by the readiness recovery deadline plus the margin, so recovery is seen. It returns sc
// itself when nothing changes, and one line per change (logged and marked on the timeline), so a
// 10 s-probe app's db-outage says how much longer it runs than the bundled target's.
func sizeToTarget(sc *scenario.Scenario, pod *corev1.Pod) (*scenario.Scenario, []string) {
	if !slices.ContainsFunc(sc.Faults, func(f scenario.Fault) bool { return f.AtLeast != "" }) {
		return sc, nil
	}
	o, err := scenarioOracle(sc, pod)
	if pod == nil || err != nil || o.Readiness == nil {
		why := "the target has no readiness probe"
		if pod == nil {
			why = "no live target pod to read the probe timing from"
		} else if err != nil {
			why = fmt.Sprintf("probe timing of the target: %v", err)
		}
		return sc, []string{"faults keep the durations their file gives (their minimum): " + why}
	}
	sized := *sc
	sized.Faults = slices.Clone(sc.Faults)
	order := make([]int, len(sized.Faults))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sc.Faults[a].At, sc.Faults[b].At) })
	var notes []string
	var shift, lastEnd time.Duration
	for _, i := range order {
		f := &sized.Faults[i]
		f.At += shift
		if f.AtLeast == scenario.UntilReadinessWithdrawn {
			deadline := o.Readiness.Detection.Deadline()
			if want := deadline + scenario.SizingMargin; want > f.Duration {
				notes = append(notes, fmt.Sprintf("faults[%d] %s lasts %s, not %s: at least until readiness has withdrawn the pod at worst (%s after it starts) + %s",
					i, f.Type, want, f.Duration, deadline, scenario.SizingMargin))
				shift += want - f.Duration
				f.Duration = want
			}
		}
		lastEnd = max(lastEnd, f.End())
	}
	sized.Load.Duration += shift
	if want := lastEnd + o.Readiness.Recovery.Deadline() + scenario.SizingMargin; want > sized.Load.Duration {
		sized.Load.Duration = want
	}
	if sized.Load.Duration != sc.Load.Duration {
		notes = append(notes, fmt.Sprintf("the load runs %s, not %s: it covers the faults and then the readiness recovery deadline (%s) + %s",
			sized.Load.Duration, sc.Load.Duration, o.Readiness.Recovery.Deadline(), scenario.SizingMargin))
	}
	if len(notes) == 0 {
		return sc, nil
	}
	return &sized, notes
}

// coverSpans returns sc with a load long enough to see every fault that declares a span on this
// target (faults.Span: a cold start's rollout, one pod at a time, each booting and then in
// rotation within the readiness recovery deadline) end, plus scenario.SizingMargin; sc itself
// when the load already covers them, with one line per change.
func coverSpans(sc *scenario.Scenario, pod *corev1.Pod) (*scenario.Scenario, []string) {
	if pod == nil {
		return sc, nil
	}
	o, err := scenarioOracle(sc, pod)
	if err != nil || o.Readiness == nil {
		return sc, nil
	}
	readyAfter := o.Readiness.Recovery.Deadline()
	load := sc.Load.Duration
	var notes []string
	for i, f := range sc.Faults {
		span := faults.Span(f.Type, f.Params, sc.Target.Replicas, readyAfter)
		if span <= 0 {
			continue
		}
		if want := f.End() + span + scenario.SizingMargin; want > load {
			notes = append(notes, fmt.Sprintf("the load runs %s, not %s: faults[%d] %s acts for up to %s on this target (%d pods, each back in rotation within %s of answering) + %s",
				want, load, i, f.Type, span, sc.Target.Replicas, readyAfter, scenario.SizingMargin))
			load = want
		}
	}
	if load == sc.Load.Duration {
		return sc, nil
	}
	covered := *sc
	covered.Load.Duration = load
	return &covered, notes
}

// coverRecovery returns sc with a load that outlasts every fault with a duration by the readiness
// recovery deadline of this target plus scenario.SizingMargin, when the scenario judges
// recovery-within: a freeze sized for the bundled app's 1 s probes ended 10 s before podinfo's
// recovery was due, and the run could not show whether it recovered. sc itself when the load
// already covers it (or nothing judges recovery), with one line per change.
func coverRecovery(sc *scenario.Scenario, pod *corev1.Pod) (*scenario.Scenario, []string) {
	if pod == nil || !slices.ContainsFunc(sc.Expect, func(e scenario.Expectation) bool { return e.Rule == "recovery-within" }) {
		return sc, nil
	}
	o, err := scenarioOracle(sc, pod)
	if err != nil || o.Readiness == nil {
		return sc, nil
	}
	deadline := o.Readiness.Recovery.Deadline()
	load := sc.Load.Duration
	last := -1
	for i, f := range sc.Faults {
		if f.Duration <= 0 {
			continue // a one-shot fault's recovery is bounded from its start, by the pods' boot
		}
		if want := f.End() + deadline + scenario.SizingMargin; want > load {
			load, last = want, i
		}
	}
	if last < 0 {
		return sc, nil
	}
	covered := *sc
	covered.Load.Duration = load
	f := sc.Faults[last]
	return &covered, []string{fmt.Sprintf("the load runs %s, not %s: faults[%d] %s ends at %s, then recovery is due within %s on this target (readiness recovery deadline) + %s",
		load, sc.Load.Duration, last, f.Type, f.End(), deadline, scenario.SizingMargin)}
}
