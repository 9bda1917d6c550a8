package lint

import "fmt"

func init() {
	register(&Rule{
		ID:       "PG013",
		Name:     "publish-not-ready-addresses",
		Severity: Warning,
		Summary:  "a Service publishes not-ready addresses, so readiness no longer removes traffic",
		Explanation: "With publishNotReadyAddresses: true, a Service's endpoints include pods whose readiness " +
			"probe fails. Whatever readiness was meant to protect (startup, draining, a dependency over " +
			"budget, saturation), clients of that Service keep reaching the pod; readiness becomes a " +
			"monitoring signal only. That is right for peer discovery of a StatefulSet, wrong for a Service " +
			"that carries user traffic. A StatefulSet's headless Services and metrics ports are not checked.",
		Fix: "Serve user traffic through a Service without publishNotReadyAddresses; keep a separate headless " +
			"Service with it only for peer discovery, or make the callers do their own withdrawal.",
		Scenario: "db-outage",
		Check:    checkPublishNotReady,
	})
}

func checkPublishNotReady(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG013")
	seen := map[*Service]bool{}
	var out []Finding
	for _, c := range w.Containers() {
		for _, rt := range servedRoutes(ctx, w, c) {
			s := rt.svc
			if !s.Spec.PublishNotReadyAddresses || s.routingOnly || seen[s] {
				continue
			}
			seen[s] = true
			f := r.finding(ctx, w, s.At("spec", "publishNotReadyAddresses"), "",
				"%s selects %s with publishNotReadyAddresses: true: a pod failing readiness keeps receiving its traffic",
				s.Ref(), w.Ref())
			if s.Pos.Line == 0 {
				f.Pos = s.Pos
			}
			f.Fix = fmt.Sprintf("remove publishNotReadyAddresses from %s (clients reach %s through it); if peers need the not-ready addresses, give them a separate headless Service with it", s.Ref(), rt)
			out = append(out, f)
		}
	}
	return out
}
