package lint

func init() {
	register(&Rule{
		ID:       "PG005",
		Name:     "liveness-checks-dependency",
		Severity: Error,
		Summary:  "liveness probes an endpoint that checks shared dependencies",
		Explanation: "A restart only helps when the process itself is broken. A liveness probe that checks " +
			"the database (or another shared dependency) fails on every replica at once when that dependency " +
			"is slow or down; the kubelet then restarts them all, the restarts add connection storms and cold " +
			"starts to the struggling dependency, and a partial slowdown becomes a full outage.",
		Fix: "Point liveness at a shallow endpoint that never touches dependencies (a heartbeat of the main " +
			"loop); report dependency health through readiness, with a budget and hysteresis, and through " +
			"metrics and alerts.",
		Scenario: "db-slowness",
		Check:    checkLivenessDependency,
	})
}

func checkLivenessDependency(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG005")
	var out []Finding
	for _, c := range w.Containers() {
		path := httpPath(c.LivenessProbe)
		m := dependencyCheck(w, path)
		if m == notDependency {
			continue
		}
		f := r.finding(ctx, w, w.AtContainer(c, Liveness.field()), c.Name,
			"container %q: liveness probes %s, which %s: a slow shared dependency restarts every replica",
			c.Name, describeHandler(c.LivenessProbe), m.note())
		if m == guessedDependency {
			f.Severity = Warning
		}
		out = append(out, f)
	}
	return out
}
