package verdict

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "recovery-within",
		Title: "All endpoints are ready again within a bound after the fault ends",
		Doc: "After each fault is reverted (or, for a one-shot fault such as a pod deletion, after it happened), the " +
			"number of ready endpoints is back to its pre-fault count within the bound; later dips are listed, not failed. " +
			"A fault followed by the next one before recovery was due is judged together with it. A rollout fault (cold-start, " +
			"rolling-update) is recovered from when its rollout completes: as many ready endpoints as before, every one a pod " +
			"the rollout created, timed from the inject (a later revert, such as cold-start's restore, ends the judged span " +
			"but is not the fault's end); a run that ends before the rollout completes or its bound passes is INCONCLUSIVE.",
		Params: []ParamSpec{
			{Name: "within", Kind: KindDuration, Doc: "the bound; default the oracle's readiness recovery deadline, plus for one-shot faults the slowest creation→ready of the pods ready before the fault × 1.5 + 2s (else the startup budget); for a rollout fault, per replaced pod the startup budget and the readiness recovery deadline", Tolerance: true},
			{Name: "replicas", Kind: KindInt, Doc: "ready endpoints that count as recovered; default the most ready at once between the load's start and the fault (any value given is a tolerance; 0 is refused)",
				Loosens: anyValue, Vacuous: vacuousAt("zero ready endpoints counts as recovered at once")},
			{Name: "fault", Kind: KindList, Doc: "judge only these faults (names or types); default every fault"},
		},
		Allowances: []string{oracle.AllowancePropagation},
		Needs:      NeedsFaultEffect | NeedsEndpoints,
		Judge:      judgeRecoveryWithin,
	})
}

func judgeRecoveryWithin(in Input) Result {
	faults, skipped := in.selectedFaults()
	if len(faults) == 0 && len(skipped) > 0 {
		return skippedResult(skipped)
	}
	r := Result{Status: Pass}
	eps := buildEndpoints(in.Entries)
	steps := eps.steps()
	// The run is seen up to its last entry or the load's end, whichever is later.
	horizon := time.Duration(0)
	if n := len(in.Entries); n > 0 {
		horizon = in.Entries[n-1].T
	}
	if load, ok := in.loadSpan(); ok {
		horizon = max(horizon, load.End)
	}
	var expected, observed []string
	var worst time.Duration
	carried := 0
	for i, f := range faults {
		if rolloutFaults[f.Type] {
			exp, obs, took := judgeRollout(in, &r, eps, steps, horizon, f)
			expected, observed = append(expected, exp), append(observed, obs)
			worst = max(worst, took)
			continue
		}
		ref := f.End
		within, basis := recoveryBound(in, f)
		expected = append(expected, fmt.Sprintf("%s: recovered ≤ %s after %s (%s)", f.Type, dur(within), refWords(f), basis))
		need := in.Params.Int("replicas", baseline(in, eps, steps, f.Start))
		if carried > 0 {
			need, carried = carried, 0 // a chain of faults recovers to the count before its first
		}
		until := horizon
		if i+1 < len(faults) && faults[i+1].Start > ref {
			until = faults[i+1].Start
		}
		r.window("recovery", "", ref, ref+within, basis)
		if need == 0 {
			r.failAt(f.Start)
			r.add(atEntry(f.Start, f.StartSeq, "%s: no endpoint was ready before the fault", f.Type))
			observed = append(observed, fmt.Sprintf("%s: no ready endpoint before the fault to recover to", f.Type))
			continue
		}
		// Recovery is the first rise back to ≥ need after the count is first below need at or after
		// ref (none needed when it never drops). Later dips are listed, not failed: other rules judge them.
		low := len(eps.ReadyAt(ref)) < need
		found := false
		recovered, seq := ref, int64(0)
		laterDips := 0
		for _, s := range steps {
			if s.T <= ref || s.T > until {
				continue
			}
			switch n := len(s.Ready); {
			case !found && low && n >= need:
				found, low = true, false
				recovered, seq = s.T, s.Seq
			case !found && !low && n < need:
				low = true
			case found && !low && n < need:
				low = true
				laterDips++
				if laterDips == 1 {
					r.add(atEntry(s.T, s.Seq, "%s: down to %d ready again %s after recovering (after %s changed)", f.Type, n, dur(s.T-recovered), s.Pod))
				}
			case found && low && n >= need:
				low = false
			}
		}
		if !found && !low {
			found = true // never dropped below need
		}
		if laterDips > 0 {
			r.figure("later_dips", float64(laterDips))
		}
		if !found && i+1 < len(faults) && faults[i+1].Start <= ref+within {
			// The next fault came before recovery was due: the chain is judged by its last fault.
			r.add(atEntry(faults[i+1].Start, faults[i+1].StartSeq, "%s started again %s after %s, before %d endpoints were back: judged with the next fault",
				faults[i+1].Type, dur(faults[i+1].Start-ref), refWords(f), need))
			observed = append(observed, fmt.Sprintf("%s: superseded by the next fault", f.Type))
			carried = need
			continue
		}
		if !found && until < ref+within {
			// The run ended before recovery was due: a recovery still to come is not a failure.
			r.unshown(fmt.Sprintf("%s: %d ready endpoints not back when the run ended, %s after %s, before its bound of %s passed: the run was too short to tell whether it recovers in time",
				f.Type, need, dur(until-ref), refWords(f), dur(within)))
			observed = append(observed, fmt.Sprintf("%s: not recovered when the run ended, %s before its bound", f.Type, dur(ref+within-until)))
			continue
		}
		if !found {
			r.failAt(ref + within)
			r.add(atEntry(ref, f.EndSeq, "%s ended; %d ready endpoints never came back (%d at %s)", f.Type, need, len(eps.ReadyAt(until)), dur(until)))
			observed = append(observed, fmt.Sprintf("%s: not recovered by %s", f.Type, dur(until)))
			continue
		}
		took := recovered - ref
		worst = max(worst, took)
		r.measure("recovery time", "s", AtMost, secs(took), secs(within))
		note := fmt.Sprintf("%d ready again %s after %s", need, dur(took), refWords(f))
		if took > within {
			r.failAt(recovered)
			note += " (LATE)"
		}
		if seq != 0 {
			r.add(atEntry(recovered, seq, "%s: %s (%s)", f.Type, note, strings.Join(eps.ReadyAt(recovered), ", ")))
		} else {
			r.add(atTime(ref, "%s: the ready count never dropped below %d", f.Type, need))
		}
		observed = append(observed, f.Type+": "+note)
	}
	if len(faults) == 0 {
		r.Expected = "a fault to recover from"
		r.nothingToJudge("no fault was injected: nothing to judge")
		return r
	}
	r.Expected = strings.Join(expected, "; ")
	r.Observed = strings.Join(observed, "; ")
	r.figure("recovery_s", secs(worst))
	return r
}

// baseline is the most endpoints ready at once from the load's start (else the first change) up to
// the fault's start: the healthy count to recover to.
func baseline(in Input, eps endpointHistory, steps []readyStep, before time.Duration) int {
	from := time.Duration(math.MinInt64)
	best := 0
	if load, ok := in.loadSpan(); ok && load.Start < before {
		from = load.Start
		best = len(eps.ReadyAt(from))
	}
	for _, s := range steps {
		if s.T >= from && s.T < before {
			best = max(best, len(s.Ready))
		}
	}
	return best
}

func refWords(f timeline.FaultWindow) string {
	if f.Reverted {
		return "the revert"
	}
	return "the fault"
}

// recoveryBound is the "within" parameter or the oracle's bound for fault f.
func recoveryBound(in Input, f timeline.FaultWindow) (time.Duration, string) {
	if in.Params.Has("within") {
		return in.Params.Duration("within", 0), "scenario bound"
	}
	var d time.Duration
	var basis []string
	if rd := in.Oracle.Readiness; rd != nil {
		d += rd.Recovery.Deadline()
		basis = append(basis, rd.Recovery.Explain)
	} else {
		d += in.Oracle.Propagation
		basis = append(basis, "propagation "+dur(in.Oracle.Propagation))
	}
	if !f.Reverted {
		// A one-shot fault (a deletion, an eviction) is recovered from by new pods booting. The bound
		// must not grow with the recovery it judges, so the boot is not measured on the replacements:
		// it is the slowest creation→ready of this run's pods that were ready before the fault (as the
		// API dated them: it includes scheduling, the container's creation and any first image pull,
		// which can only loosen it), × 1.5 + 2s for a busy node. Without one, the startup budget.
		pods := buildPods(in.Entries)
		if boot, n := bootstrapBefore(pods, f.Start); n > 0 {
			d += bootMargin(boot)
			basis = append(basis, fmt.Sprintf("+ boot before the fault: the slowest of %d pods ready %s after creation, × 1.5 + 2s = %s",
				n, dur(boot), dur(bootMargin(boot))))
		} else {
			d += in.Oracle.Startup.Budget
			basis = append(basis, "+ no boot measured before the fault: "+in.Oracle.Startup.Explain)
		}
	}
	return d, strings.Join(basis, " ")
}
