package lint

import (
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// notTrafficPort matches container port names that carry no user traffic: health checks the
// kubelet's probes use and debug listeners.
var notTrafficPort = regexp.MustCompile(`(?i)^(health|healthz|healthcheck|probe|probes|liveness|readiness|livez|readyz|debug)$`)

// assumedRoutes stands, when no Service is in view, for the Services that would route to container
// c: one route per port c declares, except metrics and profiling ports (by name, or as the port the
// pod's prometheus.io/port annotation names beside another), ports named for health checks or
// debugging. A container that declares no other port is
// taken to serve nothing, as when a Service is in view and reaches none of its ports. A
// StatefulSet is taken to be reached through the headless Service its serviceName names, which
// lint does not count as user traffic (see userRoutes): it gets no assumed route.
func assumedRoutes(w *Workload, c ContainerRef) []route {
	if w.Kind == "StatefulSet" {
		return nil
	}
	var out []route
	for _, cp := range c.Ports {
		target := intstr.FromInt32(cp.ContainerPort)
		if cp.Name != "" {
			target = intstr.FromString(cp.Name)
		}
		rt := route{svc: unseenService, port: corev1.ServicePort{Name: cp.Name, Port: cp.ContainerPort, TargetPort: target}, assumed: true}
		switch {
		case metricsPort.MatchString(cp.Name), notTrafficPort.MatchString(cp.Name), scrapeTarget(w, c, rt):
			continue
		}
		out = append(out, rt)
	}
	return out
}

// reachedByGoverningService reports whether, with no Service in view, w is taken to be reached only
// through the headless Service its serviceName names (a StatefulSet): readiness then steers no user
// traffic, as when that Service is in view.
func reachedByGoverningService(ctx *Context, w *Workload) bool {
	return w.Kind == "StatefulSet" && w.ServiceName != "" && !ctx.serviceIndex().inView(ctx.Inventory, w)
}

// noServiceText is what the explanations of the traffic-aware rules say about a workload linted with
// no Service in view.
const noServiceText = " With no Service in view (kept in other files; --services reads them without linting them), " +
	"the container is judged as if one routed user traffic to each port it declares, except metrics, health and " +
	"debug ports (an unnamed port of a long-lived protocol's registered number counts as that protocol), and the " +
	"finding says no Service was in view; a StatefulSet is taken to be reached through its headless peer Service only."

// unseenService is the Service of an assumed route.
var unseenService = &Service{Name: "(none in view)"}

// noServiceNote is what a finding about w adds when no Service was in view: lint assumed the
// traffic it judged by. It is empty when Services are in view.
func noServiceNote(ctx *Context, w *Workload) string {
	if ctx.serviceIndex().inView(ctx.Inventory, w) {
		return ""
	}
	return "; no Service was in view, so lint judged the container as if one routed user traffic to it: lint it together with its Services, or name their files with --services, to judge what really routes to it"
}
