package lint

import (
	"fmt"
	"time"
)

func init() {
	register(&Rule{
		ID:       "PG006",
		Name:     "short-timeout-on-dependency-check",
		Severity: Error,
		Summary:  "a 1 s probe timeout on an endpoint that checks dependencies",
		Explanation: "A dependency check normally answers in milliseconds but takes hundreds of milliseconds " +
			"or more when the dependency is under pressure. With timeoutSeconds 1 (the default) the probe " +
			"fails exactly when load rises, which withdraws (readiness) or restarts (liveness) instances and " +
			"pushes more load onto the survivors and the dependency: the probe becomes the amplifier of the " +
			"incident it was meant to detect. An exec probe that starts a database client (psql, mysqladmin, " +
			"redis-cli, …) pays the client's start-up and a round trip inside the same second." + probeScriptText,
		Fix: "Do not call dependencies inline from a probe: let a background checker refresh a snapshot with " +
			"its own budget and have the probe read the snapshot. If the probe must call out, give it a " +
			"timeout well above the dependency's p99 under load, and never do it from liveness.",
		Scenario: "db-slowness",
		Predicts: []string{"no-liveness-restarts", "min-ready-endpoints"},
		Check:    checkDependencyTimeout,
	})
}

func checkDependencyTimeout(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG006")
	var out []Finding
	for _, c := range w.Containers() {
		for _, kind := range []ProbeKind{Liveness, Readiness} {
			p := probeOf(c, kind)
			if p == nil || timingOf(p).Timeout > time.Second {
				continue
			}
			var what string
			m := dependencyCheck(w, httpPath(p))
			if ec, ok := probeExecDependency(ctx, w, c, p); ok && ec.db {
				what, m = "runs "+ec.describe(), declaredDependency
			} else if m != notDependency {
				what = m.note()
			} else {
				continue
			}
			f := r.finding(ctx, w, w.AtContainer(c, kind.field()), c.Name,
				"container %q: %s probe %s has timeoutSeconds %d and %s: it fails as soon as the dependency slows past 1s",
				c.Name, kind, describeHandler(p), int(timingOf(p).Timeout/time.Second), what)
			if kind != Liveness {
				f.Severity = Warning
			}
			if m == guessedDependency {
				f.Severity--
			}
			f.Probe = string(kind)
			f.Fix = fmt.Sprintf("set %s timeoutSeconds ≥ 5 (above the dependency's p99 under load), or have %s read a snapshot a background checker refreshes",
				kind.field(), describeHandler(p))
			out = append(out, f)
		}
	}
	return out
}
