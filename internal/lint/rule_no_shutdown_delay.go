package lint

func init() {
	register(&Rule{
		ID:       "PG009",
		Name:     "no-withdrawal-delay",
		Severity: Warning,
		Summary:  "nothing holds the process up while its endpoint is withdrawn",
		Explanation: "When a pod is deleted, the EndpointSlice update and SIGTERM start at the same moment " +
			"and race: kube-proxy on every node, and any ingress or load balancer, needs about a second or " +
			"more to stop routing to the pod. A process that exits (or stops accepting) on SIGTERM right away " +
			"refuses the requests that are still routed to it in that window, so every rollout, scale-down " +
			"and node drain costs failed requests.",
		Fix: "Add a preStop hook that waits for withdrawal (the native `sleep` action, a few seconds above the " +
			"measured propagation), or keep serving for a withdrawal delay after SIGTERM in the application " +
			"and declare it with annotation " + AnnotationWithdrawal + ".",
		Scenario: "pod-delete-under-load",
		Check:    checkNoShutdownDelay,
	})
}

func checkNoShutdownDelay(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG009")
	if !serves(ctx, w) {
		return nil
	}
	withdrawal, hasWithdrawal, err := declared(w, AnnotationWithdrawal)
	if err != nil || hasWithdrawal && withdrawal > 0 {
		return nil // declared (an unreadable value is PG015's finding)
	}
	var out []Finding
	for _, c := range w.Containers() {
		if _, has, _ := preStopDelay(c); has || len(c.Ports) == 0 && c.ReadinessProbe == nil {
			continue // has a hook, or is not a serving container (no ports, no readiness)
		}
		what := "no preStop hook and no " + AnnotationWithdrawal + " annotation"
		if hasWithdrawal {
			what = "no preStop hook and " + AnnotationWithdrawal + " is 0"
		}
		out = append(out, r.finding(ctx, w, w.AtContainer(c), c.Name,
			"container %q: %s: it may stop serving while traffic is still routed to it", c.Name, what))
	}
	return out
}
