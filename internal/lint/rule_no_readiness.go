package lint

func init() {
	register(&Rule{
		ID:       "PG014",
		Name:     "no-readiness-probe",
		Severity: Warning,
		Summary:  "a container behind a Service has no readiness probe",
		Explanation: "Without a readiness probe a pod is ready as soon as its containers run: it gets traffic " +
			"before bootstrap is done, keeps it while draining after SIGTERM until the endpoint update wins " +
			"the race, and keeps it while a dependency it needs is unusable. Nothing withdraws it short of a " +
			"restart.",
		Fix: "Add a readiness probe on an endpoint that fails while starting, draining, over the dependency " +
			"budget or saturated, with a short period and a low failure threshold.",
		Scenario: "cold-start",
		Check:    checkNoReadiness,
	})
}

func checkNoReadiness(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG014")
	svcs := servicesSelecting(ctx.Inventory, w)
	if len(svcs) == 0 || w.Kind == "Job" || w.Kind == "CronJob" {
		return nil
	}
	var out []Finding
	for _, c := range w.Containers() {
		if c.ReadinessProbe != nil || len(c.Ports) == 0 {
			continue
		}
		out = append(out, r.finding(ctx, w, w.AtContainer(c), c.Name,
			"container %q: no readiness probe although %s routes to it: it takes traffic before it can serve and keeps it when it cannot",
			c.Name, svcs[0].Ref()))
	}
	return out
}
