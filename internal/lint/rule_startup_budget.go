package lint

func init() {
	register(&Rule{
		ID:       "PG004",
		Name:     "startup-budget-below-cold-start",
		Severity: Error,
		Summary:  "the startup budget is shorter than a measured cold start",
		Explanation: "The kubelet kills a container whose startupProbe (or, without one, liveness) fails " +
			"failureThreshold times in a row: as early as initialDelaySeconds + (failureThreshold − 1) × " +
			"periodSeconds after start for a probe that fails fast (connection refused). When a measured cold " +
			"start takes longer, every cold start ends in a kill and a restart that is just as slow: the pod " +
			"never becomes ready, and a rollout or node drain stalls or takes capacity down with it.",
		Fix: "Raise the startupProbe's failureThreshold (keep periodSeconds short) until (failureThreshold − 1) × " +
			"periodSeconds covers the slowest measured cold start with margin; if there is no startupProbe, " +
			"add one rather than stretching liveness.",
		Scenario: "cold-start",
		Check:    checkStartupBudget,
	})
}

func checkStartupBudget(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG004")
	cold := ctx.Config.ColdStart
	if cold <= 0 {
		return nil
	}
	var out []Finding
	for _, c := range w.Containers() {
		kind := Startup
		p := c.StartupProbe
		if p == nil {
			kind, p = Liveness, c.LivenessProbe
		}
		if p == nil {
			continue
		}
		budget := timingOf(p).KillAfter()
		if budget >= cold {
			continue
		}
		out = append(out, r.finding(ctx, w, w.AtContainer(c, kind.field()), c.Name,
			"container %q: %s probe kills as early as initialDelay + (F−1)·P = %s, before the measured cold start %s (%s) ends",
			c.Name, kind, fmtDur(budget), fmtDur(cold), ctx.Config.ColdStartSource))
	}
	return out
}
