package lint

import "fmt"

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
			"the same check.",
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
		f.Fix = fmt.Sprintf("point liveness at its own shallow endpoint (a main-loop heartbeat, not %s) and set liveness failureThreshold ≥ %d at periodSeconds %d, so (F−1)·P waits past readiness's worst withdrawal %s (%s + %s propagation)",
			describeHandler(live), failureThresholdAbove(lt.Period, withdrawn), seconds32(lt.Period), fmtDur(withdrawn), fmtDur(rt.DetectionWindow().Latest), fmtDur(prop))
		out = append(out, f)
	}
	return out
}

// identicalProbesReported reports whether PG001 finds container c: liveness and readiness run the
// same check and a Service routes traffic to c (with no route, readiness withdraws nothing before a
// restart).
func identicalProbesReported(ctx *Context, w *Workload, c ContainerRef) bool {
	live, ready := c.LivenessProbe, c.ReadinessProbe
	if live == nil || ready == nil || !hasHandler(live) || !handlersEqual(live, ready) {
		return false
	}
	return len(servedRoutes(ctx, w, c)) > 0
}
