package verdict

import (
	"fmt"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "min-ready-endpoints",
		Title: "At least N endpoints stay ready throughout the load",
		Doc: "The number of ready endpoints never drops below min while the load runs: a shared outage must never " +
			"withdraw every backend.",
		Params: []ParamSpec{
			{Name: "min", Kind: KindInt, Default: "1", Doc: "the least number of ready endpoints allowed (0 is refused)",
				Vacuous: vacuousAt("zero ready endpoints is always at least 0")},
			{Name: "grace", Kind: KindDuration, Default: "0s", Doc: "a dip shorter than this is tolerated (reported as a figure)", Tolerance: true},
			{Name: "rollout-floor", Kind: KindBool, Default: "false", Tolerance: true,
				Doc: "lower min to the workload's replicas less what its rolling update may take out of service at once " +
					"(maxUnavailable; a StatefulSet has no surge), when that is lower"},
		},
		Needs: NeedsEndpoints,
		Judge: judgeMinReadyEndpoints,
	})
}

func judgeMinReadyEndpoints(in Input) Result {
	need := in.Params.Int("min", 1)
	grace := in.Params.Duration("grace", 0)
	r := Result{Status: Pass, Expected: fmt.Sprintf("≥ %d ready endpoints at every moment of the load", need)}
	if in.Params.Bool("rollout-floor", false) {
		floor, why := rolloutFloor(in.Entries)
		switch {
		case why != "":
			r.Expected += " (" + why + ")"
		case floor < need:
			r.Expected = fmt.Sprintf("≥ %d ready endpoints at every moment of the load (min %d lowered: %s)", max(floor, 1), need, rolloutFloorWords(in.Entries))
			need = max(floor, 1)
		}
	}
	load, ok := in.loadSpan()
	if !ok {
		r.nothingToJudge("no load on the timeline: nothing to judge")
		return r
	}
	eps := buildEndpoints(in.Entries)
	r.window("ready endpoints ≥ min", "", load.Start, load.End, r.Expected)

	// The ready count as a step function over the load.
	steps := eps.readyOver(load)
	lowest := len(steps[0].Ready)
	var below, longest time.Duration
	dips := 0
	for i, s := range steps {
		lowest = min(lowest, len(s.Ready))
		if len(s.Ready) >= need {
			continue
		}
		end := load.End
		if i+1 < len(steps) {
			end = steps[i+1].T
		}
		// Merge consecutive low steps into one dip.
		if i > 0 && len(steps[i-1].Ready) < need {
			below += end - s.T
			continue
		}
		dipEnd := end
		for j := i + 1; j < len(steps) && len(steps[j].Ready) < need; j++ {
			dipEnd = load.End
			if j+1 < len(steps) {
				dipEnd = steps[j+1].T
			}
		}
		below += end - s.T
		d := dipEnd - s.T
		longest = max(longest, d)
		dips++
		ready := strings.Join(s.Ready, ", ")
		if ready == "" {
			ready = "none"
		}
		if d < grace {
			r.add(atEntry(s.T, s.Seq, "%d ready (%s) for %s after %s changed: within the %s grace", len(s.Ready), ready, dur(d), s.Pod, dur(grace)))
			continue
		}
		r.failAt(s.T)
		if s.Pod == "" {
			r.add(atTime(s.T, "%d ready (%s) when the load started", len(s.Ready), ready))
		} else {
			r.add(atEntry(s.T, s.Seq, "%d ready (%s) after %s's endpoint changed, for %s", len(s.Ready), ready, s.Pod, dur(d)))
		}
	}
	r.Observed = fmt.Sprintf("lowest %d ready endpoints; below %d for %s in %d dips (longest %s)", lowest, need, dur(below), dips, dur(longest))
	r.figure("min_ready", float64(lowest))
	r.measure("lowest ready endpoints", "endpoints", AtLeast, float64(lowest), float64(need))
	r.figure("below_min_s", secs(below))
	r.figure("longest_dip_s", secs(longest))
	return r
}

// rolloutFloor is the workload's replicas less what its rolling update may take out of service at
// once, from the run's workload entry; why says when that is not known.
func rolloutFloor(entries []timeline.Entry) (floor int, why string) {
	w := workloadOf(entries)
	if w == nil || w.Replicas == nil || w.RolloutUnavailable == nil {
		return 0, "the workload's maxUnavailable is not known: min kept"
	}
	return *w.Replicas - *w.RolloutUnavailable, ""
}

func rolloutFloorWords(entries []timeline.Entry) string {
	w := workloadOf(entries)
	return fmt.Sprintf("%s %s rolls with maxUnavailable %d of %d replicas", w.Kind, w.Name, *w.RolloutUnavailable, *w.Replicas)
}

// workloadOf is the run's workload entry, nil when there is none.
func workloadOf(entries []timeline.Entry) *timeline.WorkloadSpec {
	for _, e := range entries {
		if e.Kind == timeline.KindWorkload && e.Workload != nil {
			return e.Workload
		}
	}
	return nil
}
