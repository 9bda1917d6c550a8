package runner

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/verdict"
)

// rolloutPoll is how often a load sized to a rollout's bound asks whether the rollout is complete.
const rolloutPoll = 500 * time.Millisecond

// coverRolloutBound returns sc with a load long enough for recovery-within to decide every rollout
// fault (one that declares a span, cold-start) on this target: up to the rule's bound after the
// inject plus scenario.SizingMargin, at most maxHeldLoad. A rollout that takes longer than the
// span estimate (a StatefulSet's pods each drain before their successor is created; a starved
// node boots slowly) is then seen to complete or to miss its bound, never cut short. Since most
// rollouts complete well inside the bound, the runner ends such a load early (endAfterRollouts):
// minLoad, the load before this change, is the shortest it may run. It returns sc itself and a
// zero minLoad when the load already covers the bound or the target's probes give none.
func coverRolloutBound(sc *scenario.Scenario, pod *corev1.Pod) (covered *scenario.Scenario, minLoad time.Duration, notes []string) {
	if pod == nil {
		return sc, 0, nil
	}
	o, err := scenarioOracle(sc, pod)
	if err != nil {
		return sc, 0, nil
	}
	bound, ok := verdict.RolloutBound(o, sc.Target.Replicas, podBoot(pod))
	if !ok {
		return sc, 0, nil
	}
	load := sc.Load.Duration
	for i, f := range sc.Faults {
		if faults.Span(f.Type, f.Params, sc.Target.Replicas, time.Second) <= 0 {
			continue
		}
		want := min(f.At+bound+scenario.SizingMargin, maxHeldLoad)
		if want > load {
			notes = append(notes, fmt.Sprintf("the load runs up to %s, not %s: faults[%d] %s's rollout is judged against its bound (%s after the inject) + %s; it ends %s after the rollout completes, and not before %s",
				want, load, i, f.Type, bound, scenario.SizingMargin, scenario.SizingMargin, sc.Load.Duration))
			load = want
		}
	}
	if load == sc.Load.Duration {
		return sc, 0, nil
	}
	c := *sc
	c.Load.Duration = load
	return &c, sc.Load.Duration, notes
}

// rolloutEnd is when a load sized by coverRolloutBound may end: not before min after the load's
// start, once every declared fault is past and every rollout fault's rollout has completed, margin
// later.
type rolloutEnd struct {
	min, margin time.Duration
	// lastFault is when the schedule's last declared fault has started and, with a duration, ended.
	lastFault time.Duration
}

// due reports whether the load may end elapsed after its start, the rollouts having been seen
// complete at completed after it (zero: not yet).
func (e rolloutEnd) due(elapsed, completed time.Duration) bool {
	return completed > 0 && elapsed >= e.min && elapsed >= completed+e.margin && elapsed > e.lastFault
}

// endAfterRollouts stops load once e is due, reading the scenario's timeline every rolloutPoll,
// until ctx is done or the load ends by itself (done closed). It marks the early end on the
// timeline with how long the load ran of how long it was sized for.
func (s *scenarioRun) endAfterRollouts(ctx context.Context, e rolloutEnd, load loadRun, start time.Time, done <-chan struct{}) {
	t := time.NewTicker(rolloutPoll)
	defer t.Stop()
	var completed time.Duration
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-t.C:
		}
		elapsed := time.Since(start)
		if completed == 0 && elapsed > e.lastFault {
			if n, ok := verdict.RolloutsComplete(s.tl.Entries(), s.loadStart); ok && n > 0 {
				completed = elapsed
				s.log.Info("rollouts complete", "rollouts", n, "after", completed.Round(time.Millisecond))
			}
		}
		if e.due(elapsed, completed) {
			s.mark("load-end-early", fmt.Sprintf("every rollout complete %s after the load started: the load ends at %s of the %s it was sized for",
				completed.Round(100*time.Millisecond), elapsed.Round(100*time.Millisecond), s.sc.Load.Duration))
			load.Stop()
			return
		}
	}
}

// podBoot is how long pod took from its creation to its Ready condition, as the API dates them
// (to the second), or zero when it is not ready.
func podBoot(pod *corev1.Pod) time.Duration {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			if d := c.LastTransitionTime.Sub(pod.CreationTimestamp.Time); d > 0 {
				return d
			}
		}
	}
	return 0
}
