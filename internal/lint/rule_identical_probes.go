package lint

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
			"gets the chance to shield users from the restart.",
		Fix: "Give liveness its own shallow endpoint that only checks the process can make progress (a " +
			"heartbeat of the main loop) and let readiness check startup, draining, dependency budget and " +
			"saturation; make liveness slower to fire (longer period, higher failureThreshold) than readiness.",
		Scenario: "db-slowness",
		Check:    checkIdenticalProbes,
	})
}

func checkIdenticalProbes(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG001")
	var out []Finding
	for _, c := range w.Containers() {
		live, ready := c.LivenessProbe, c.ReadinessProbe
		if live == nil || ready == nil || !handlersEqual(live, ready) {
			continue
		}
		pos := w.AtContainer(c, Liveness.field())
		lt, rt := timingOf(live), timingOf(ready)
		if lt == rt {
			out = append(out, r.finding(ctx, w, pos, c.Name,
				"container %q: liveness and readiness are identical (%s, %s): a failure that withdraws the pod restarts it in the same instant",
				c.Name, describeHandler(live), lt.schedule()))
			continue
		}
		f := r.finding(ctx, w, pos, c.Name,
			"container %q: liveness and readiness call the same check %s (different thresholds): whatever withdraws the pod also restarts it",
			c.Name, describeHandler(live))
		f.Severity = Warning
		out = append(out, f)
	}
	return out
}
