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
// debugging, and the ports a reconcile-only controller declares for scrapes (see
// reconcilerPortServes). A container that declares no port at all but has a readiness probe on a
// network port is taken to serve on a port it does not declare (containerPort is informational, and
// readiness steers only traffic), unless it is a controller; a container that declares ports, none
// of them for traffic, or no port and no such probe, is taken to serve nothing, as when a Service
// is in view and reaches none of its ports. A StatefulSet is taken to be reached through the
// headless Service its serviceName names, which lint does not count as user traffic (see
// userRoutes): it gets no assumed route.
func assumedRoutes(w *Workload, c ContainerRef) []route {
	if w.Kind == "StatefulSet" {
		return nil
	}
	reconciler := reconcileOnly(w, c)
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
		case reconciler && !reconcilerPortServes(c, cp):
			continue
		}
		out = append(out, rt)
	}
	if len(c.Ports) == 0 && !reconciler {
		if n, ok := probePortNumber(c.ReadinessProbe); ok {
			out = append(out, route{svc: unseenService, port: corev1.ServicePort{Port: n, TargetPort: intstr.FromInt32(n)}, assumed: true, undeclared: true})
		}
	}
	return out
}

// assumedUnrouted reports whether, with no Service in view, container c of w is taken to get no
// user traffic from any Service: a StatefulSet is reached only through the headless Service its
// serviceName names, and a reconcile-only controller's Services carry scrapes and health checks.
// Readiness then steers no user traffic, as when such Services are in view.
func assumedUnrouted(ctx *Context, w *Workload, c ContainerRef) bool {
	if ctx.serviceIndex().inView(ctx.Inventory, w) {
		return false
	}
	return w.Kind == "StatefulSet" && w.ServiceName != "" || reconcileOnly(w, c)
}

// noServiceText is what the explanations of the traffic-aware rules say about a workload linted with
// no Service in view.
const noServiceText = " With no Service in view (kept in other files; --services reads them without linting them), " +
	"the container is judged as if one routed user traffic to each port it declares, except metrics, health and " +
	"debug ports (an unnamed port of a long-lived protocol's registered number counts as that protocol), and the " +
	"finding says no Service was in view. A container that declares no port but has a readiness probe on a network " +
	"port is judged as served on a port it does not declare (containerPort is informational; readiness steers only " +
	"traffic). A controller (the workload, container or app.kubernetes.io/component name has the word controller or " +
	"operator, and none of admission, webhook, ingress, gateway, proxy or router) is taken to serve only through its " +
	"ports named for a webhook or admission and the ports its probes check: its other ports carry scrapes (a " +
	"controller-runtime metrics port is often named http). A StatefulSet is taken to be reached through its headless " +
	"peer Service only."

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

// controllerWords name a Kubernetes controller (an operator) in a workload, container or
// app.kubernetes.io/component name: a process that watches the API server and reconciles objects.
var controllerWords = map[string]bool{"controller": true, "controllers": true, "operator": true}

// servingControllerWords name controllers whose job is to answer requests: admission webhooks, and
// ingress controllers, gateways and proxies, which carry the traffic they configure.
var servingControllerWords = map[string]bool{
	"admission": true, "webhook": true, "webhooks": true,
	"ingress": true, "gateway": true, "proxy": true, "router": true,
}

// reconcileOnly reports whether the names of w and its container c say c is a controller that
// serves no requests of its own: a word of controllerWords in the workload's name, the container's
// name or the pod's app.kubernetes.io/component label, and no word of servingControllerWords. Such
// a controller's ports carry scrapes, health checks and, where it has one, its admission webhook.
func reconcileOnly(w *Workload, c ContainerRef) bool {
	controller := false
	for _, name := range []string{w.Name, c.Name, w.PodLabels[labelComponent]} {
		for _, tok := range nameTokens(name) {
			if servingControllerWords[tok] {
				return false
			}
			controller = controller || controllerWords[tok]
		}
	}
	return controller
}

// labelComponent is the recommended label that names a workload's role within its application.
const labelComponent = "app.kubernetes.io/component"

// reconcilerPortServes reports whether port cp of a reconcile-only controller's container c takes
// requests: it is named for a webhook or admission, or a probe of c checks it (the controller
// gates its readiness or liveness on that listener, as a webhook server does). Its other ports (a
// controller-runtime metrics port named http, a webhook port left declared where the webhook is
// off) are taken to carry scrapes.
func reconcilerPortServes(c ContainerRef, cp corev1.ContainerPort) bool {
	for _, tok := range nameTokens(cp.Name) {
		if webhookWords[tok] {
			return true
		}
	}
	for _, k := range []ProbeKind{Readiness, Liveness, Startup} {
		port, ok := probePort(probeOf(c, k))
		if ok && (port.Type == intstr.Int && port.IntVal == cp.ContainerPort || port.Type == intstr.String && cp.Name != "" && port.StrVal == cp.Name) {
			return true
		}
	}
	return false
}

// webhookWords name a port that serves admission webhooks.
var webhookWords = map[string]bool{"admission": true, "webhook": true, "webhooks": true}
