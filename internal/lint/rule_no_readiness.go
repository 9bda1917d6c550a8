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
			"restart. Only containers a Service routes user traffic to are checked (not metrics ports, named " +
			"so or named by the pod's prometheus.io/port annotation beside another port). The " +
			"finding is info for a lone pod that is never beside another: one replica of a StatefulSet, or " +
			"of a Deployment with strategy Recreate. A readiness gate there has nowhere to send the traffic " +
			"it withholds, so requests fail with or without it; the probe still turns a hung pod's timeouts " +
			"into quick refusals. It is info, too, when only headless Services route to the container (as for " +
			"PG009): readiness then decides only which addresses a DNS lookup returns, to clients that are " +
			"mostly scrapers, peers and client-side balancers that connect before they send." + noServiceText,
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
		if lone, why := lonePod(w); lone {
			f.Severity = Info
			f.Message += fmt.Sprintf("; but %s, so there is no other pod to send its traffic to, and requests fail with or without a readiness gate", why)
		} else if onlyHeadless(routes) {
			f.Severity = Info
			f.Message += "; but " + headlessNote(routes[0])
		}
		f.Message += noServiceNote(ctx, w)
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

// lonePod reports whether w runs one pod that never overlaps another (one replica, or the API
// default of one, of a StatefulSet or of a Deployment with strategy Recreate), and says why.
func lonePod(w *Workload) (bool, string) {
	if w.Replicas != nil && *w.Replicas > 1 {
		return false, ""
	}
	switch {
	case w.Kind == "StatefulSet":
		return true, "it is a single-replica StatefulSet"
	case w.Recreate:
		return true, "it runs one replica with strategy Recreate"
	}
	return false, ""
}
