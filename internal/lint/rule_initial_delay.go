package lint

import (
	"fmt"
	"time"
)

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
			"the moment startup succeeds. A delay up to --max-initial-delay (5 s) is grace, not a budget.",
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
		f := r.finding(ctx, w, w.AtContainer(c, Liveness.field(), "initialDelaySeconds"), c.Name,
			"container %q: no startupProbe, liveness initialDelaySeconds is %s (limit %s): a start slower than initialDelay + (F−1)·P = %s is killed by liveness",
			c.Name, fmtDur(t.InitialDelay), fmtDur(ctx.Config.MaxInitialDelay), fmtDur(t.KillAfter()))
		f.Probe = string(Liveness)
		const period = 5
		f.Fix = fmt.Sprintf("add a startupProbe running liveness's check (%s) with periodSeconds %d and failureThreshold %d (the same %s budget, ended the moment the app is up), and drop liveness initialDelaySeconds to 0",
			describeHandler(c.LivenessProbe), period, failureThresholdAbove(period*time.Second, t.KillAfter()), fmtDur(t.KillAfter()))
		out = append(out, f)
	}
	return out
}
