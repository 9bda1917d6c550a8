package lint

import (
	"fmt"
	"time"
)

func init() {
	register(&Rule{
		ID:       "PG007",
		Name:     "readiness-window-too-long",
		Severity: Warning,
		Summary:  "readiness takes longer than the limit to withdraw a failing instance",
		Explanation: "Readiness withdraws an instance at worst failureThreshold × periodSeconds + timeoutSeconds " +
			"after it stops being able to serve, plus propagation to the EndpointSlice and kube-proxy. Until " +
			"then, every request routed to it waits for a timeout or fails. The API defaults (period 10 s, " +
			"threshold 3, timeout 1 s) give 31 s; the limit (--max-readiness-window, default 60 s) leaves such " +
			"tuning choices alone and flags windows where a broken instance keeps its share of traffic for " +
			"over a minute, which every request-level SLO notices. Readiness only matters where it steers " +
			"traffic: when the Services that select the workload are in view and none routes user traffic to " +
			"the container (only a StatefulSet's headless peer Service, or metrics ports), there is no finding; " +
			"with no Service in view, lint reports it and says so, except for a StatefulSet, taken to be reached " +
			"through its headless peer Service only, and a controller that serves no requests of its own (named " +
			"as for PG009, and no port of it named for a webhook or checked by a probe). When only headless Services route to the " +
			"container (as for PG009), the finding is info: readiness then decides only which addresses a DNS " +
			"lookup returns, to clients that are mostly scrapers, peers and client-side balancers.",
		Fix: "Use a short readiness period and a low failure threshold (for example periodSeconds 3–5, " +
			"failureThreshold 2, timeoutSeconds 2); keep the endpoint cheap so probing often costs little, " +
			"and add hysteresis in the application rather than in a long threshold.",
		Scenario: "db-outage",
		Check:    checkReadinessWindow,
	})
}

func checkReadinessWindow(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG007")
	var out []Finding
	for _, c := range w.Containers() {
		if c.ReadinessProbe == nil {
			continue
		}
		routes := servedRoutes(ctx, w, c)
		if len(routes) == 0 && (len(servicesSelecting(ctx, w)) > 0 || assumedUnrouted(ctx, w, c)) {
			continue // Services select it (or, none in view, are assumed to), none sends it user traffic: readiness steers nothing
		}
		t := timingOf(c.ReadinessProbe)
		win := t.DetectionWindow()
		if win.Latest <= ctx.Config.MaxReadinessWindow {
			continue
		}
		f := r.finding(ctx, w, w.AtContainer(c, Readiness.field()), c.Name,
			"container %q: readiness withdraws a failing instance only after up to %s (%s), above the limit %s",
			c.Name, fmtDur(win.Latest), t.schedule(), fmtDur(ctx.Config.MaxReadinessWindow))
		if onlyHeadless(routes) {
			f.Severity = Info
			f.Message += "; but " + headlessNote(routes[0])
		}
		f.Message += noServiceNote(ctx, w)
		f.Probe = string(Readiness)
		f.Fix = readinessFix(t)
		out = append(out, f)
	}
	return out
}

// readinessFix proposes readiness settings with a short window: periodSeconds 5 (or the current,
// if shorter), failureThreshold at most 3, timeoutSeconds at most 5.
func readinessFix(t Timing) string {
	p, f, timeout := min(t.Period, 5*time.Second), min(t.Failure, 3), min(t.Timeout, 5*time.Second)
	win := time.Duration(f)*p + timeout
	return fmt.Sprintf("set readiness periodSeconds %d, failureThreshold %d, timeoutSeconds %d: the window F·P + timeout becomes %s (now %s); keep the endpoint cheap so probing often costs little",
		seconds32(p), f, seconds32(timeout), fmtDur(win), fmtDur(t.DetectionWindow().Latest))
}
