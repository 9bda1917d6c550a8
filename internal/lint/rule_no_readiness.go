package lint

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func init() {
	register(&Rule{
		ID:       "PG014",
		Name:     "no-readiness-probe",
		Severity: Warning,
		Summary:  "a container behind a Service has no readiness probe",
		Explanation: "Without a readiness probe a pod is ready as soon as its containers run: it gets traffic " +
			"before bootstrap is done, keeps it while draining after SIGTERM until the endpoint update wins " +
			"the race, and keeps it while a dependency it needs is unusable. Nothing withdraws it short of a " +
			"restart. Only containers a Service routes user traffic to are checked (not metrics ports).",
		Fix: "Add a readiness probe on an endpoint that fails while starting, draining, over the dependency " +
			"budget or saturated, with a short period and a low failure threshold.",
		Scenario: "cold-start",
		Check:    checkNoReadiness,
	})
}

func checkNoReadiness(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG014")
	var out []Finding
	for _, c := range w.Containers() {
		if c.ReadinessProbe != nil {
			continue
		}
		routes := servedRoutes(ctx, w, c)
		if len(routes) == 0 {
			continue
		}
		f := r.finding(ctx, w, w.AtContainer(c), c.Name,
			"container %q: no readiness probe although %s routes to it: it takes traffic before it can serve and keeps it when it cannot",
			c.Name, routes[0])
		f.Probe = string(Readiness)
		f.Fix = fmt.Sprintf("add to container %q a readinessProbe on port %s (an endpoint that fails while starting, draining or over its dependency budget) with periodSeconds 5 and failureThreshold 2",
			c.Name, routeTarget(routes[0]))
		out = append(out, f)
	}
	return out
}

// routeTarget is the container port a route delivers to, as a probe would name it.
func routeTarget(rt route) string {
	t := rt.port.TargetPort
	if t.Type == intstr.Int && t.IntVal == 0 {
		t = intstr.FromInt32(rt.port.Port)
	}
	return t.String()
}
