package frontdoor

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/probegate/probegate/internal/scenario"
)

// The gateway door: the ingress door's Traefik (TraefikImage), its kubernetesGateway provider on
// the scenario's namespace serving the user's HTTPRoute through a Gateway probegate creates there.
// What every scenario shares (the Gateway API CRDs, probegate's GatewayClass, read access to
// GatewayClasses and Namespaces) is installed once (gatewaysetup.go).
const (
	// GatewayClass is the class of the Gateway probegate creates in each scenario's namespace,
	// handled by Traefik's Gateway controller (installed once).
	GatewayClass = "probegate"
	// GatewayName is that Gateway's name: the scenario's copy of the user's HTTPRoute attaches to it.
	GatewayName     = "probegate"
	gatewayGroup    = "gateway.networking.k8s.io"
	gatewayVersion  = gatewayGroup + "/v1"
	gatewayListener = "web"
)

// gatewayClassSelector picks probegate's GatewayClass out of the cluster's (its label): the
// namespace's Traefik serves no Gateway of another class, the user's own included.
const gatewayClassSelector = "app.kubernetes.io/part-of=probegate"

func init() {
	Register(Definition{
		Kind: scenario.FrontDoorGateway,
		Doc: "a Traefik Gateway API implementation in the scenario's namespace serving the target file's HTTPRoute: " +
			"the gateway picks the pod of each request, and its access log names it",
		Images:  []string{TraefikImage},
		Resolve: resolveGateway,
		Setup:   setupGateway,
		Plan:    planGateway,
		Record:  recordAccessLog,
	})
}

// httpRoute is what the door reads of an HTTPRoute (gateway.networking.k8s.io/v1).
type httpRoute struct {
	Spec struct {
		Hostnames []string    `json:"hostnames"`
		Rules     []routeRule `json:"rules"`
	} `json:"spec"`
}

type routeRule struct {
	Matches     []routeMatch  `json:"matches"`
	Filters     []routeFilter `json:"filters"`
	BackendRefs []backendRef  `json:"backendRefs"`
}

type routeFilter struct {
	Type string `json:"type"`
}

type routeMatch struct {
	Path *struct {
		Type  *string `json:"type"`
		Value *string `json:"value"`
	} `json:"path"`
	Method      *string           `json:"method"`
	Headers     []json.RawMessage `json:"headers"`
	QueryParams []json.RawMessage `json:"queryParams"`
}

type backendRef struct {
	Group     *string `json:"group"`
	Kind      *string `json:"kind"`
	Name      string  `json:"name"`
	Namespace *string `json:"namespace"`
	Port      *int32  `json:"port"`
	Weight    *int32  `json:"weight"`
}

// isService reports whether b is a Service's: group "" or core (Traefik's name for it), kind Service.
func (b backendRef) isService() bool {
	g, k := deref(b.Group), derefOr(b.Kind, "Service")
	return (g == "" || g == "core") && k == "Service"
}

func (b backendRef) groupKind() string {
	if g := deref(b.Group); g != "" {
		return g + "/" + derefOr(b.Kind, "Service")
	}
	return derefOr(b.Kind, "Service")
}

func (b backendRef) port() string {
	if b.Port == nil {
		return "(none)"
	}
	return fmt.Sprint(*b.Port)
}

// resolveGateway finds the HTTPRoute the target file names and checks that it sends every path the
// load asks for to the target Service's port, naming the host it answers for.
func resolveGateway(in Input) (Route, error) {
	found, names := findObject(in.Objects, "HTTPRoute", in.Door.HTTPRoute)
	if found == nil {
		return Route{}, notFound("frontDoor.httpRoute", "HTTPRoute", in.Door.HTTPRoute, names)
	}
	name := found.GetName()
	if gv := found.GetAPIVersion(); gv != gatewayVersion {
		return Route{}, fmt.Errorf("httproute %s: apiVersion %s: want %s", name, gv, gatewayVersion)
	}
	if gw, _ := findObject(in.Objects, "Gateway", GatewayName); gw != nil {
		return Route{}, fmt.Errorf("gateway %s: probegate creates its own Gateway of that name in each scenario's namespace: rename yours", GatewayName)
	}
	if in.Protocol == scenario.LoadGRPC {
		return Route{}, fmt.Errorf("httproute %s: the gateway door carries HTTP load only: a gRPC target goes through %s", name, scenario.FrontDoorKubeProxy)
	}
	route, err := decodeHTTPRoute(found)
	if err != nil {
		return Route{}, fmt.Errorf("httproute %s: %w", name, err)
	}
	if err := checkBackendRefs(name, route, in); err != nil {
		return Route{}, err
	}
	for _, path := range in.Paths {
		if err := checkRouteOf(name, route, path, in); err != nil {
			return Route{}, err
		}
	}
	var host string
	if len(route.Spec.Hostnames) > 0 {
		host = requestHost(route.Spec.Hostnames[0])
	}
	return Route{HTTPRoute: name, Host: host}, nil
}

func decodeHTTPRoute(o *unstructured.Unstructured) (*httpRoute, error) {
	data, err := json.Marshal(o.Object)
	if err != nil {
		return nil, err
	}
	var r httpRoute
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// checkBackendRefs checks every backendRef of the route: a Service of the manifests, in the route's
// own namespace, with that port. A route to nothing is a mistake of the file, whichever path the
// load takes.
func checkBackendRefs(name string, route *httpRoute, in Input) error {
	services := servicesOf(in.Objects)
	for _, rule := range route.Spec.Rules {
		for _, b := range rule.BackendRefs {
			if !b.isService() {
				return fmt.Errorf("httproute %s: a backendRef of kind %s (%s): only Services are served", name, b.groupKind(), b.Name)
			}
			if ns := deref(b.Namespace); ns != "" {
				return fmt.Errorf("httproute %s: routes to service %s in namespace %s: a backend must be in the route's own namespace (each scenario's)", name, b.Name, ns)
			}
			svc, ok := services[b.Name]
			if !ok {
				return fmt.Errorf("httproute %s: routes to service %s, which is not in the manifests", name, b.Name)
			}
			if b.Port == nil || !hasPortNumber(svc.Spec.Ports, *b.Port) {
				return fmt.Errorf("httproute %s: routes to service %s port %s, which it does not have", name, b.Name, b.port())
			}
		}
	}
	return nil
}

// checkRouteOf checks that the rule a request for path takes sends it, whole, to the target's
// Service and port.
func checkRouteOf(name string, route *httpRoute, path string, in Input) error {
	rule, ok := ruleOf(route, path)
	if !ok {
		return fmt.Errorf("httproute %s: no rule routes %s (the load's request path; matches on headers, query parameters or a regular expression are not taken as the load's)", name, path)
	}
	for _, f := range rule.Filters {
		if f.Type == "RequestRedirect" {
			return fmt.Errorf("httproute %s: redirects %s (a RequestRedirect filter): the load needs the target's answer", name, path)
		}
	}
	if len(rule.BackendRefs) == 0 {
		return fmt.Errorf("httproute %s: the rule for %s has no backendRefs", name, path)
	}
	for _, b := range rule.BackendRefs {
		if b.Weight != nil && *b.Weight == 0 {
			continue
		}
		if b.Name != in.Service.Name || *b.Port != in.Port.Port {
			return fmt.Errorf("httproute %s: routes %s to service %s port %d, not to the target's service %s port %s",
				name, path, b.Name, *b.Port, in.Service.Name, portName(in.Port))
		}
	}
	return nil
}

// ruleOf is the rule a GET of path takes, by the Gateway API's precedence: an Exact path match,
// then the longest PathPrefix, then a method match; ties go to the first rule. Matches that need
// headers or query parameters, or match by regular expression, are not the load's.
func ruleOf(route *httpRoute, path string) (routeRule, bool) {
	path, _, _ = strings.Cut(path, "?")
	best, score := -1, -1
	for i, rule := range route.Spec.Rules {
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []routeMatch{{}} // no matches: every request (PathPrefix /)
		}
		for _, m := range matches {
			if s := routeMatchScore(m, path); s > score {
				best, score = i, s
			}
		}
	}
	if best < 0 {
		return routeRule{}, false
	}
	return route.Spec.Rules[best], true
}

// routeMatchScore ranks how m matches a GET of path: -1 not at all; an Exact match above every
// prefix, a longer prefix above a shorter one, a method match breaking a tie.
func routeMatchScore(m routeMatch, path string) int {
	if len(m.Headers) > 0 || len(m.QueryParams) > 0 {
		return -1
	}
	method := 0
	if m.Method != nil {
		if *m.Method != "GET" {
			return -1
		}
		method = 1
	}
	typ, value := "PathPrefix", "/"
	if m.Path != nil {
		typ, value = derefOr(m.Path.Type, typ), derefOr(m.Path.Value, value)
	}
	switch typ {
	case "Exact":
		if path == value {
			return 1<<20 + method
		}
	case "PathPrefix":
		// Element-wise, a trailing slash ignored: /foo matches /foo and /foo/bar, not /foobar.
		trimmed := strings.TrimSuffix(value, "/")
		if trimmed == "" || path == trimmed || strings.HasPrefix(path, trimmed+"/") {
			return len(value)<<1 + method
		}
	}
	return -1
}

func hasPortNumber(ports []corev1.ServicePort, n int32) bool {
	for _, p := range ports {
		if p.Port == n {
			return true
		}
	}
	return false
}

func deref(s *string) string { return derefOr(s, "") }

func derefOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}

// gatewayArgs are the Kubernetes Gateway provider's flags: ns alone, probegate's GatewayClass alone.
func gatewayArgs(ns string) []string {
	return []string{
		"--providers.kubernetesgateway=true",
		"--providers.kubernetesgateway.namespaces=" + ns,
		"--providers.kubernetesgateway.labelselector=" + gatewayClassSelector,
	}
}

// gatewayRules are what the provider reads in the namespace (its informers: Services,
// EndpointSlices, Secrets, ConfigMaps, and the Gateway API's namespaced kinds of the standard
// channel), and the status it writes of the Gateway and the HTTPRoute (so they say whether
// Traefik took them). GatewayClasses and Namespaces are cluster-scoped: gatewaysetup.go.
func gatewayRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services", "secrets", "configmaps"}, Verbs: readVerbs},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: readVerbs},
		{APIGroups: []string{gatewayGroup}, Resources: []string{"gateways", "httproutes", "grpcroutes", "referencegrants", "backendtlspolicies"}, Verbs: readVerbs},
		{APIGroups: []string{gatewayGroup}, Resources: []string{"gateways/status", "httproutes/status"}, Verbs: []string{"update"}},
	}
}

// planGateway is the gateway of one scenario namespace: probegate's Gateway (one HTTP listener on
// Traefik's web entry point, routes from its own namespace), then the Traefik of traefikPlan; the
// scenario's copy of the user's HTTPRoute is attached to that Gateway.
func planGateway(r Route, ns string) Plan {
	p := traefikPlan(ns, gatewayRules(), gatewayArgs(ns))
	p.Objects = append([]runtime.Object{gatewayObject(ns)}, p.Objects...)
	p.Rewrite = rewriteHTTPRoute(r.HTTPRoute)
	return p
}

// gatewayObject is probegate's Gateway in ns. Its listener's port is the entry point's: Traefik
// attaches a listener to the entry point of that port.
func gatewayObject(ns string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gatewayVersion,
		"kind":       "Gateway",
		"metadata":   map[string]any{"name": GatewayName, "namespace": ns, "labels": probegateLabels()},
		"spec": map[string]any{
			"gatewayClassName": GatewayClass,
			"listeners": []any{map[string]any{
				"name": gatewayListener, "port": int64(webPort), "protocol": "HTTP",
				"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "Same"}},
			}},
		},
	}}
}

// rewriteHTTPRoute attaches the scenario's copy of the user's HTTPRoute to probegate's Gateway
// alone, as the ingress door gives the Ingress its class. The user's other HTTPRoutes and
// Gateways are applied as they are, and the namespace's Traefik serves none of them.
func rewriteHTTPRoute(name string) func(o *unstructured.Unstructured) {
	return func(o *unstructured.Unstructured) {
		if o.GetKind() != "HTTPRoute" || o.GetName() != name {
			return
		}
		_ = unstructured.SetNestedSlice(o.Object, []any{map[string]any{
			"group": gatewayGroup, "kind": "Gateway", "name": GatewayName, "sectionName": gatewayListener,
		}}, "spec", "parentRefs")
	}
}
