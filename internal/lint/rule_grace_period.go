package lint

import "time"

func init() {
	register(&Rule{
		ID:       "PG008",
		Name:     "grace-period-too-short",
		Severity: Error,
		Summary:  "terminationGracePeriodSeconds does not cover preStop delay + drain + margin",
		Explanation: "The grace period is one clock for the whole shutdown: it starts when the pod is " +
			"deleted, runs through the preStop hook, and then through the application's own withdrawal and " +
			"drain after SIGTERM. When preStop delay + declared drain time + a margin does not fit, the " +
			"kubelet sends SIGKILL mid-drain: in-flight requests are cut, connections reset, and cleanup " +
			"(closing pools, flushing telemetry) never runs.",
		Fix: "Set terminationGracePeriodSeconds ≥ preStop delay + drain time (" + AnnotationDrainSeconds +
			") + margin, or shorten the preStop sleep and bound the drain in the application.",
		Scenario: "drain-exceeds-grace",
		Check:    checkGracePeriod,
	})
}

func checkGracePeriod(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG008")
	drain, declared, err := drainTime(w)
	if err != nil {
		return []Finding{r.finding(ctx, w, w.Pos, "", "%v", err)}
	}
	grace := gracePeriod(&w.Pod)
	var out []Finding
	for _, c := range w.Containers() {
		pre, hasPreStop, _ := preStopDelay(c)
		if !hasPreStop && !declared {
			continue
		}
		need := pre + drain + ctx.Config.GraceMargin
		if grace >= need {
			continue
		}
		pos := w.At("terminationGracePeriodSeconds")
		if w.Pod.TerminationGracePeriodSeconds == nil {
			pos = w.AtContainer(c, "lifecycle")
		}
		out = append(out, r.finding(ctx, w, pos, c.Name,
			"container %q: terminationGracePeriodSeconds %s < preStop %s + drain %s + margin %s = %s: SIGKILL lands mid-drain",
			c.Name, fmtDur(grace), fmtDur(pre), fmtDur(drain), fmtDur(ctx.Config.GraceMargin), fmtDur(need.Round(time.Second))))
	}
	return out
}
