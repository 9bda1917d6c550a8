package lint

import (
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// servicesSelecting returns the Services in view whose selector matches w's pods. A namespace left
// empty in a manifest matches any (the manifest is applied into one namespace). It reads the
// context's Service index, so linting n workloads beside n Services takes time linear in n.
func servicesSelecting(ctx *Context, w *Workload) []*Service {
	return ctx.serviceIndex().selecting(w)
}

// route is one Service port whose traffic reaches a container.
type route struct {
	svc  *Service
	port corev1.ServicePort
	// assumed is true when no Service is in view and the route stands for one that would reach the
	// container port: see assumedRoutes.
	assumed bool
	// undeclared is true for an assumed route to a port the container does not declare (it declares
	// none); port then holds the number its readiness probe checks.
	undeclared bool
}

func (r route) String() string {
	name := r.port.Name
	if name == "" {
		t := r.port.TargetPort
		if t.Type == intstr.Int && t.IntVal == 0 {
			t = intstr.FromInt32(r.port.Port)
		}
		name = t.String()
	}
	switch {
	case r.undeclared:
		return "a Service to a port it does not declare (none in view; its readiness probe checks port " + name + ")"
	case r.assumed:
		return "a Service to port " + name + " (none in view)"
	}
	return r.svc.Ref() + " port " + name
}

// metricsPort matches Service port names that carry scrapes and diagnostics, not user traffic.
var metricsPort = regexp.MustCompile(`(?i)(metrics|prometheus|monitoring|telemetry|pprof|profil)`)

// headless reports whether s has no virtual IP (clusterIP: None): its DNS names the pods directly.
func (s *Service) headless() bool { return s.Spec.ClusterIP == corev1.ClusterIPNone }

// routesTo returns the Service ports that deliver traffic to container c of w. A Service port
// reaches the container whose port its targetPort names, or whose containerPort equals its numeric
// targetPort (the port itself when targetPort is unset). A number no container declares still reaches
// the pod; it is given to the container whose probes use it, else to the first container — except on
// a StatefulSet's governing Service, which exists for the pods' DNS names and often carries a
// placeholder port (csi-snapshotter's `dummy: 12345`): there a port nothing declares or probes routes
// nowhere.
func routesTo(ctx *Context, w *Workload, c ContainerRef) []route {
	var out []route
	for _, s := range servicesSelecting(ctx, w) {
		governing := w.Kind == "StatefulSet" && s.Name == w.ServiceName
		for _, p := range s.Spec.Ports {
			owner, known := portOwner(w, p)
			if owner == nil || owner != c.Container || governing && !known {
				continue
			}
			out = append(out, route{svc: s, port: p})
		}
	}
	return out
}

// portOwner is the container a Service port's traffic reaches, or nil; known is false when the
// owner is a guess (a number that no container declares and no probe uses goes to the first
// container).
func portOwner(w *Workload, p corev1.ServicePort) (owner *corev1.Container, known bool) {
	target := p.TargetPort
	if target.Type == intstr.Int && target.IntVal == 0 {
		target = intstr.FromInt32(p.Port)
	}
	cs := w.Containers()
	for _, c := range cs {
		if _, ok := targetContainerPort(c, p); ok {
			return c.Container, true
		}
	}
	if target.Type == intstr.String || len(cs) == 0 {
		return nil, false // a named port nobody declares routes nowhere
	}
	for _, c := range cs {
		for _, k := range []ProbeKind{Readiness, Liveness, Startup} {
			if n, ok := probePortNumber(probeOf(c, k)); ok && n == target.IntVal {
				return c.Container, true
			}
		}
	}
	if len(w.Pod.Containers) > 0 {
		return &w.Pod.Containers[0], false
	}
	return cs[0].Container, false
}

// userRoutes keeps the routes to container c that carry user traffic: not a metrics or profiling
// port, not the port the pod's prometheus.io/port annotation names when c serves on another, and not
// the headless Service a StatefulSet's pods use to find each other.
func userRoutes(w *Workload, c ContainerRef, rs []route) []route {
	var out []route
	for _, r := range rs {
		if metricsPort.MatchString(r.port.Name) || r.port.TargetPort.Type == intstr.String && metricsPort.MatchString(r.port.TargetPort.StrVal) {
			continue
		}
		if scrapeTarget(w, c, r) {
			continue
		}
		if r.svc.headless() && w.Kind == "StatefulSet" {
			continue
		}
		out = append(out, r)
	}
	return out
}

// scrapeTarget reports whether route r reaches the port that w's prometheus.io/port annotation names
// as its metrics port while container c declares another port: the annotation then tells the
// scrape port from the traffic port. A port that is both (the only one c declares) stays a traffic
// route.
func scrapeTarget(w *Workload, c ContainerRef, r route) bool {
	n, err := strconv.Atoi(strings.TrimSpace(w.Annotations[annotationPrometheusPort]))
	if err != nil {
		return false
	}
	cp, ok := targetContainerPort(c, r.port)
	if !ok || int(cp.ContainerPort) != n {
		return false
	}
	for _, other := range c.Ports {
		if int(other.ContainerPort) != n {
			return true
		}
	}
	return false
}

// annotationPrometheusPort is the pod annotation Prometheus's Kubernetes discovery configurations
// conventionally read for the port to scrape.
const annotationPrometheusPort = "prometheus.io/port"

// onlyHeadless reports whether every one of routes reaches the pods through a headless Service.
// userRoutes has already dropped a StatefulSet's headless Services, so these belong to another kind
// of workload (a Deployment, a DaemonSet). With no virtual IP there is no kube-proxy rule to
// propagate: clients take the ready pods' addresses from DNS and choose among them themselves.
// Such Services mostly exist for scrapers (kube-state-metrics, node-exporter, prometheus-operator),
// peer discovery (memberlist rings) and client-side balancers (gRPC DNS resolution), which connect
// before they send and move on from an address that refuses; whether a client sends plain requests
// through one only the clients show.
func onlyHeadless(routes []route) bool {
	for _, r := range routes {
		if !r.svc.headless() {
			return false
		}
	}
	return len(routes) > 0
}

// headlessNote says, for a finding about traffic through route rt, why it does not fail the run
// when only headless Services reach the container.
func headlessNote(rt route) string {
	return rt.svc.Ref() + " is headless: its clients take the pods' addresses from DNS and pick among them themselves (scrapers, peer discovery, " +
		"client-side balancers that connect before they send), so no kube-proxy rule routes requests to the pod; " +
		"if a client does send requests through it, the finding holds"
}

// servedRoutes returns the user-traffic routes to container c; none for run-to-completion workloads.
// When no Service is in view for w (see serviceIndex.inView), lint cannot see what routes to c and
// judges it as if a Service sent user traffic to each port c declares for it (assumedRoutes); the
// findings say so (noServiceNote).
func servedRoutes(ctx *Context, w *Workload, c ContainerRef) []route {
	if w.RunsToCompletion {
		return nil
	}
	if !ctx.serviceIndex().inView(ctx.Inventory, w) {
		return assumedRoutes(w, c)
	}
	return userRoutes(w, c, routesTo(ctx, w, c))
}

// probePort returns the port a network probe checks (httpGet, tcpSocket or grpc), by name or number.
func probePort(p *corev1.Probe) (intstr.IntOrString, bool) {
	switch {
	case p == nil:
	case p.HTTPGet != nil:
		return p.HTTPGet.Port, true
	case p.TCPSocket != nil:
		return p.TCPSocket.Port, true
	case p.GRPC != nil:
		return intstr.FromInt32(p.GRPC.Port), true
	}
	return intstr.IntOrString{}, false
}

// probePortNumber returns the numeric port a probe checks, if it names one by number.
func probePortNumber(p *corev1.Probe) (int32, bool) {
	if port, ok := probePort(p); ok && port.Type == intstr.Int {
		return port.IntVal, true
	}
	return 0, false
}
