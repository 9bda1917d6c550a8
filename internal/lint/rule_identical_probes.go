package lint

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func init() {
	register(&Rule{
		ID:       "PG001",
		Name:     "identical-probes",
		Severity: Error,
		Summary:  "liveness and readiness run the same check",
		Explanation: "Liveness answers \"would a restart help?\" and readiness \"should this instance get new " +
			"traffic?\". When both call the same handler, one of them asks the wrong question: either readiness " +
			"is shallow and never withdraws an instance whose database is slow, or liveness is deep and a slow " +
			"shared dependency fails every replica's liveness at once, restarting them all into the outage. With " +
			"identical thresholds too, the pod is withdrawn and killed at the same moment, so readiness never " +
			"gets the chance to shield users from the restart. Probes that differ only in HTTP headers count as " +
			"the same check. The finding is a warning when the thresholds differ, and info when, besides, a " +
			"startupProbe guards the start, liveness already waits ((F−1)·P) past readiness's worst " +
			"withdrawal plus propagation, and nothing names the check for readiness or dependencies (a path or " +
			"command with `ready` in it, a path declared in " + AnnotationDependencyCheckPaths + " or named like " +
			"one): the pod leaves the Service long before a restart, and only a failure of the shared check that " +
			"outlasts liveness's wait restarts it; whether the check is deep enough to fail that long only the " +
			"application shows." + noServiceText,
		Fix: "Give liveness its own shallow endpoint that only checks the process can make progress (a " +
			"heartbeat of the main loop) and let readiness check startup, draining, dependency budget and " +
			"saturation; make liveness slower to fire (longer period, higher failureThreshold) than readiness.",
		Scenario: "db-slowness",
		Predicts: []string{"no-liveness-restarts"},
		Restates: []string{"PG002"},
		Check:    checkIdenticalProbes,
	})
}

func checkIdenticalProbes(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG001")
	prop := ctx.propagation(w)
	var out []Finding
	for _, c := range w.Containers() {
		if !identicalProbesReported(ctx, w, c) {
			continue
		}
		live, ready := c.LivenessProbe, c.ReadinessProbe
		pos := w.AtContainer(c, Liveness.field())
		lt, rt := timingOf(live), timingOf(ready)
		headers := ""
		if headersDiffer(live, ready) {
			headers = ", differing only in HTTP headers"
		}
		var f Finding
		if lt == rt {
			f = r.finding(ctx, w, pos, c.Name,
				"container %q: liveness and readiness are identical (%s, %s%s): a failure that withdraws the pod restarts it in the same instant",
				c.Name, describeHandler(live), lt.schedule(), headers)
		} else {
			f = r.finding(ctx, w, pos, c.Name,
				"container %q: liveness and readiness call the same check %s (different thresholds%s): whatever withdraws the pod also restarts it",
				c.Name, describeHandler(live), headers)
			f.Severity = Warning
		}
		if c.StartupProbe == nil {
			f.Message += fmt.Sprintf("; with no startupProbe, every bootstrap step must also pass it within liveness's initialDelay + (F−1)·P = %s or the start is killed", fmtDur(lt.KillAfter()))
		}
		f.Probe = string(Liveness)
		withdrawn := rt.DetectionWindow().Latest + prop
		ordered := lt.Failure >= failureThresholdAbove(lt.Period, withdrawn)
		if ordered && lt != rt && c.StartupProbe != nil && !deepSharedCheck(w, live) {
			f.Severity = Info
			f.Message += fmt.Sprintf("; liveness already waits (F−1)·P = %s, past readiness's worst withdrawal %s, and a startupProbe guards the start, so the pod leaves the Service long before a restart and only a failure of the shared check lasting %s restarts it",
				fmtDur(lt.DetectionWindow().Earliest), fmtDur(withdrawn), fmtDur(lt.DetectionWindow().Earliest))
		}
		f.Message += noServiceNote(ctx, w)
		f.Fix = sharedCheckFix(live, lt, rt, prop)
		out = append(out, f)
	}
	return out
}

// identicalProbesReported reports whether PG001 finds container c: liveness and readiness run the
// same check and a Service routes traffic to c, or no Service is in view and c declares a port for
// traffic (with no route, readiness withdraws nothing before a restart).
func identicalProbesReported(ctx *Context, w *Workload, c ContainerRef) bool {
	live, ready := c.LivenessProbe, c.ReadinessProbe
	if live == nil || ready == nil || !hasHandler(live) || !handlersEqual(live, ready) {
		return false
	}
	return len(servedRoutes(ctx, w, c)) > 0
}

// sharedCheckFix gives liveness its own endpoint and, unless liveness already waits past readiness's
// worst withdrawal plus propagation prop, the failureThreshold that makes it wait.
func sharedCheckFix(live *corev1.Probe, lt, rt Timing, prop time.Duration) string {
	withdrawn := rt.DetectionWindow().Latest + prop
	own := fmt.Sprintf("point liveness at its own shallow endpoint (a main-loop heartbeat, not %s)", describeHandler(live))
	past := fmt.Sprintf("readiness's worst withdrawal %s (%s + %s propagation)", fmtDur(withdrawn), fmtDur(rt.DetectionWindow().Latest), fmtDur(prop))
	if need := failureThresholdAbove(lt.Period, withdrawn); lt.Failure < need {
		return fmt.Sprintf("%s and set liveness failureThreshold ≥ %d at periodSeconds %d, so (F−1)·P waits past %s", own, need, seconds32(lt.Period), past)
	}
	return own + "; its thresholds already wait past " + past
}

// deepSharedCheck reports whether the manifest names probe p's check for readiness or for
// dependencies: then it fails whenever the app should leave the Service, not only when it hangs.
func deepSharedCheck(w *Workload, p *corev1.Probe) bool {
	return namedForReadiness(p) || dependencyCheck(w, httpPath(p)) != notDependency
}
