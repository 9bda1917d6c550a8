package verdict

import (
	"fmt"
	"math"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "startup-not-killed",
		Title: "No container is killed during bootstrap",
		Doc: "No restart with cause startup, and no restart with cause liveness of a container incarnation that never " +
			"became ready (from creation or the previous restart). At least one pod must be seen becoming ready: with a fault, " +
			"one created after the fault started (before its revert), a cold pod, and the run must outlast the startup budget " +
			"after the fault and after the creation of every cold pod not yet ready (else INCONCLUSIVE). In a pod of several " +
			"containers a pod is ready when the app's container is (the oracle's: the one whose probes are under test) or the " +
			"pod's Ready condition is, and each container's incarnation by its own readiness: a sidecar's does not count.",
		Params: []ParamSpec{
			{Name: "pods", Kind: KindList, Doc: "only judge these pods (default: every pod)"},
		},
		Needs: NeedsRestarts,
		Judge: judgeStartupNotKilled,
	})
}

func judgeStartupNotKilled(in Input) Result {
	only := setOf(in.Params.List("pods"))
	r := Result{Status: Pass, Expected: fmt.Sprintf("no startup or liveness kill before a container is first ready (%s)", in.Oracle.Startup.Explain)}
	pods := buildPods(in.Entries)
	container := in.container()
	// With a fault, only the pods it made boot count as booted: those created at or after a fault's
	// start and before its revert (cold-start's restore rolls back to the old bootstrap).
	var faults []timeline.FaultWindow
	for _, f := range in.faults() {
		if !f.Skipped {
			faults = append(faults, f)
		}
	}
	cold := func(p *podLife) bool {
		for _, f := range faults {
			if p.Created != nil && p.Created.T >= f.Start && (!f.Reverted || p.Created.T < f.End) {
				return true
			}
		}
		return false
	}
	horizon := time.Duration(0)
	if n := len(in.Entries); n > 0 {
		horizon = in.Entries[n-1].T
	}
	budget := in.Oracle.Startup.Budget
	bounded := !in.Oracle.Startup.Unbounded
	coldPods, dueAt := 0, time.Duration(math.MaxInt64)
	kills, booted := 0, 0
	var slowest float64
	var readyEvidence []Evidence
	for _, name := range sortedPodNames(pods) {
		if len(only) > 0 && !only[name] {
			continue
		}
		p := pods[name]
		judged := len(faults) == 0 || cold(p)
		first, ready := p.firstReady(container)
		if judged && len(faults) > 0 {
			coldPods++
			if !ready && bounded {
				// Never ready: a startup kill can come until its budget has passed since its creation.
				end := horizon
				if p.Deleting != nil {
					end = p.Deleting.T
				}
				if end-p.Created.T < budget {
					r.unshown(fmt.Sprintf("%s, created %s after the fault, was not ready and was watched for only %s, less than its startup budget %s: a bootstrap kill may still have come",
						name, dur(p.Created.T-faults[0].Start), dur(end-p.Created.T), dur(budget)))
				} else {
					dueAt = min(dueAt, p.Created.T+budget)
					r.add(atEntry(p.Created.T, p.Created.Seq, "%s created %s after the fault, not ready %s later (startup budget %s)",
						name, dur(p.Created.T-faults[0].Start), dur(end-p.Created.T), dur(budget)))
				}
			}
		}
		if ready && judged {
			booted++
			if p.Created != nil {
				slowest = max(slowest, secs(first.T-p.Created.T))
			}
		}
		// Each incarnation of a container bootstraps from the pod's creation or the container's
		// previous restart until its first ready=true (its own, or the pod's Ready condition: a
		// sidecar's readiness says nothing of it); a liveness kill in that span is a bootstrap kill.
		prev := map[string]time.Duration{}
		for _, e := range p.Restarts {
			cause, c := e.Restart.Cause, e.Restart.Container
			since, seen := prev[c]
			if !seen {
				since = time.Duration(math.MinInt64)
			}
			bootstrap := !p.readyBetween(c, since, e.T)
			prev[c] = e.T
			if cause == timeline.CauseStartup || (cause == timeline.CauseLiveness && bootstrap) {
				kills++
				r.failAt(e.T)
				state := "before it was ready"
				if !bootstrap {
					state = "after it had been ready"
				}
				r.add(atEntry(e.T, e.Seq, "%s container %s (restart #%d) killed by %s %s: %s", name, e.Restart.Container, e.Restart.RestartCount, cause, state, e.Restart.Evidence))
			}
		}
		if ready {
			readyEvidence = append(readyEvidence, atEntry(first.T, first.Seq, "%s first ready", name))
		}
	}
	for _, ev := range readyEvidence {
		r.add(ev)
	}
	switch {
	case len(faults) > 0:
		first := faults[0].Start
		if bounded && horizon < first+budget {
			r.unshown(fmt.Sprintf("the run ended %s after the fault, inside the startup budget %s: a pod the fault had yet to boot could still be killed", dur(horizon-first), dur(budget)))
		}
		switch {
		case coldPods == 0:
			r.unshown("no pod was created after the fault started: no cold bootstrap to judge")
			r.Observed = fmt.Sprintf("%d bootstrap kills; no pod created after the fault", kills)
		case booted == 0:
			if dueAt != time.Duration(math.MaxInt64) && len(r.Unshown) == 0 {
				r.failAt(dueAt)
			}
			r.Observed = fmt.Sprintf("%d bootstrap kills; no pod created after the fault was seen becoming ready (%d created)", kills, coldPods)
		default:
			r.Observed = fmt.Sprintf("%d bootstrap kills; %d of %d pods created after the fault became ready (slowest %.1fs from creation, budget %s)", kills, booted, coldPods, slowest, dur(budget))
		}
	case booted == 0:
		r.failAt(0)
		r.Observed = fmt.Sprintf("%d bootstrap kills; no pod was seen becoming ready", kills)
	default:
		r.Observed = fmt.Sprintf("%d bootstrap kills; %d pods became ready (slowest %.1fs from creation, budget %s)", kills, booted, slowest, dur(in.Oracle.Startup.Budget))
	}
	r.figure("bootstrap_kills", float64(kills))
	r.figure("pods_ready", float64(booted))
	r.figure("slowest_bootstrap_s", slowest)
	if bounded && booted > 0 {
		r.measure("slowest bootstrap", "s", AtMost, slowest, secs(budget))
	}
	return r
}
