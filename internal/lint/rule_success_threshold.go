package lint

import "fmt"

func init() {
	register(&Rule{
		ID:       "PG012",
		Name:     "success-threshold-not-one",
		Severity: Error,
		Summary:  "successThreshold other than 1 on liveness or startup",
		Explanation: "For liveness and startup probes successThreshold must be 1: one success is what ends " +
			"a failure streak or a bootstrap. The API server rejects any other value, so the object is never " +
			"admitted and the rollout that carries it fails before any pod runs.",
		Fix: "Remove successThreshold from liveness and startup probes (or set it to 1); express hysteresis " +
			"for readiness only, or inside the application.",
		ConfirmNote: "kubectl apply --dry-run=server -f <manifest> (the API server rejects the object; no scenario can run it)",
		Check:       checkSuccessThreshold,
	})
}

func checkSuccessThreshold(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG012")
	var out []Finding
	for _, c := range w.Containers() {
		for _, kind := range []ProbeKind{Liveness, Startup} {
			p := probeOf(c, kind)
			if p == nil || p.SuccessThreshold == 0 || p.SuccessThreshold == 1 {
				continue
			}
			f := r.finding(ctx, w, w.AtContainer(c, kind.field(), "successThreshold"), c.Name,
				"container %q: %s probe successThreshold is %d; it must be 1 (the API server rejects the object)",
				c.Name, kind, p.SuccessThreshold)
			f.Probe = string(kind)
			f.Fix = fmt.Sprintf("remove successThreshold: %d from the %s (1 is the only value allowed)", p.SuccessThreshold, kind.field())
			out = append(out, f)
		}
	}
	return out
}
