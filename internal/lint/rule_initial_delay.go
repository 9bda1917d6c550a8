package lint

func init() {
	register(&Rule{
		ID:       "PG003",
		Name:     "initial-delay-instead-of-startup-probe",
		Severity: Warning,
		Summary:  "no startupProbe; a large liveness initialDelaySeconds guesses the bootstrap time",
		Explanation: "initialDelaySeconds is a fixed guess: a fast start waits for nothing before liveness " +
			"protects it, and a start slower than the guess (cold caches, a busy node, a slow dependency at " +
			"boot) is killed by liveness and restarted into the same slow start, a crash loop. A startupProbe " +
			"gives bootstrap its own budget of failureThreshold × periodSeconds and hands over to liveness " +
			"the moment startup succeeds.",
		Fix: "Add a startupProbe on a startup endpoint with failureThreshold × periodSeconds above the measured " +
			"cold start (with margin), and drop liveness initialDelaySeconds to 0 or a few seconds.",
		Scenario: "cold-start",
		Check:    checkInitialDelay,
	})
}

func checkInitialDelay(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG003")
	var out []Finding
	for _, c := range w.Containers() {
		if c.StartupProbe != nil || c.LivenessProbe == nil {
			continue
		}
		t := timingOf(c.LivenessProbe)
		if t.InitialDelay <= ctx.Config.MaxInitialDelay {
			continue
		}
		out = append(out, r.finding(ctx, w, w.AtContainer(c, Liveness.field(), "initialDelaySeconds"), c.Name,
			"container %q: no startupProbe, liveness initialDelaySeconds is %s (limit %s): a start slower than initialDelay + (F−1)·P = %s is killed by liveness",
			c.Name, fmtDur(t.InitialDelay), fmtDur(ctx.Config.MaxInitialDelay), fmtDur(t.KillAfter())))
	}
	return out
}
