package lint

import "fmt"

func init() {
	register(&Rule{
		ID:       "PG005",
		Name:     "liveness-checks-dependency",
		Severity: Error,
		Summary:  "liveness probes an endpoint that checks shared dependencies",
		Explanation: "A restart only helps when the process itself is broken. A liveness probe that checks " +
			"the database (or another shared dependency) fails on every replica at once when that dependency " +
			"is slow or down; the kubelet then restarts them all, the restarts add connection storms and cold " +
			"starts to the struggling dependency, and a partial slowdown becomes a full outage. An exec probe " +
			"that runs a database client against another host (a replica pinging its primary) is the same check." + probeScriptText,
		Fix: "Point liveness at a shallow endpoint that never touches dependencies (a heartbeat of the main " +
			"loop); report dependency health through readiness, with a budget and hysteresis, and through " +
			"metrics and alerts.",
		Scenario: "db-slowness",
		Predicts: []string{"no-liveness-restarts"},
		Restates: []string{"PG006"},
		Check:    checkLivenessDependency,
	})
}

func checkLivenessDependency(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG005")
	var out []Finding
	for _, c := range w.Containers() {
		p := c.LivenessProbe
		var f Finding
		if ec, ok := probeExecDependency(ctx, w, c, p); ok && ec.host != "" {
			f = r.finding(ctx, w, w.AtContainer(c, Liveness.field()), c.Name,
				"container %q: liveness runs %s: when %s is slow or down, this container is restarted, which cannot help",
				c.Name, ec.describe(), ec.host)
			if !ec.db {
				f.Severity = Warning
			}
		} else {
			path := httpPath(p)
			m := dependencyCheck(w, path)
			if m == notDependency {
				continue
			}
			f = r.finding(ctx, w, w.AtContainer(c, Liveness.field()), c.Name,
				"container %q: liveness probes %s, which %s: a slow shared dependency restarts every replica",
				c.Name, describeHandler(p), m.note())
			if m == guessedDependency {
				f.Severity = Warning
			}
		}
		f.Probe = string(Liveness)
		f.Fix = fmt.Sprintf("replace liveness %s with a check of this process only (a main-loop heartbeat endpoint, or the local server without its dependencies); move the dependency check to readiness with timeoutSeconds above the dependency's p99 under load",
			describeHandler(p))
		out = append(out, f)
	}
	return out
}
