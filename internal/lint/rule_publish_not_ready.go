package lint

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
			"that carries user traffic.",
		Fix: "Serve user traffic through a Service without publishNotReadyAddresses; keep a separate headless " +
			"Service with it only for peer discovery, or make the callers do their own withdrawal.",
		Scenario: "db-outage",
		Check:    checkPublishNotReady,
	})
}

func checkPublishNotReady(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG013")
	var out []Finding
	for _, s := range servicesSelecting(ctx.Inventory, w) {
		if !s.Spec.PublishNotReadyAddresses {
			continue
		}
		f := r.finding(ctx, w, s.At("spec", "publishNotReadyAddresses"), "",
			"%s selects %s with publishNotReadyAddresses: true: a pod failing readiness keeps receiving its traffic",
			s.Ref(), w.Ref())
		if s.Pos.Line == 0 {
			f.Pos = s.Pos
		}
		out = append(out, f)
	}
	return out
}
