package frontdoor

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/probegate/probegate/internal/scenario"
)

// The ingress door: Traefik v3 (hack/images.sh traefik) deployed into the scenario's namespace,
// watching that namespace only, serving the user's Ingress, its access log naming the pod address
// it sent each request to.
const (
	// TraefikImage is the controller's image, built by hack/images.sh traefik.
	TraefikImage = "probegate/traefik:dev"
	traefikName  = "probegate-traefik"
	// IngressClass is the class the scenario's copy of the user's Ingress is given, through the
	// kubernetes.io/ingress.class annotation: the namespace's own controller takes it without an
	// IngressClass object, which is cluster-scoped (and reading those needs a ClusterRole).
	IngressClass    = "probegate"
	classAnnotation = "kubernetes.io/ingress.class"
	webPort         = 8000 // the controller's HTTP entry point
	pingPort        = 8080 // its /ping, the readiness probe
)

var traefikLabels = map[string]string{"app.kubernetes.io/name": traefikName, "app.kubernetes.io/part-of": "probegate"}

func init() {
	Register(Definition{
		Kind: scenario.FrontDoorIngress,
		Doc: "a Traefik ingress controller in the scenario's namespace serving the target file's Ingress: " +
			"the controller picks the pod of each request, and its access log names it",
		Images:  []string{TraefikImage},
		Resolve: resolveIngress,
		Plan:    planTraefik,
		Record:  recordAccessLog,
	})
}

// resolveIngress finds the Ingress the target file names and checks that it sends every path the
// load asks for to the target Service's port, naming the host it answers for.
func resolveIngress(in Input) (Route, error) {
	found, names := findObject(in.Objects, "Ingress", in.Door.Ingress)
	if found == nil {
		return Route{}, notFound("frontDoor.ingress", "Ingress", in.Door.Ingress, names)
	}
	if gv := found.GetAPIVersion(); gv != "networking.k8s.io/v1" {
		return Route{}, fmt.Errorf("ingress %s: apiVersion %s: want networking.k8s.io/v1", found.GetName(), gv)
	}
	var ing netv1.Ingress
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(found.Object, &ing); err != nil {
		return Route{}, fmt.Errorf("ingress %s: %w", found.GetName(), err)
	}
	services := servicesOf(in.Objects)
	// Every backend must be a Service of the manifests with that port: a route to nothing is a
	// mistake of the file, whichever path the load takes.
	for _, b := range backends(&ing) {
		if b.Service == nil {
			return Route{}, fmt.Errorf("ingress %s: a backend that is not a Service (resource backends are not served)", ing.Name)
		}
		svc, ok := services[b.Service.Name]
		if !ok {
			return Route{}, fmt.Errorf("ingress %s: routes to service %s, which is not in the manifests", ing.Name, b.Service.Name)
		}
		if !hasPort(svc, b.Service.Port) {
			return Route{}, fmt.Errorf("ingress %s: routes to service %s port %s, which it does not have", ing.Name, svc.Name, backendPort(b.Service.Port))
		}
	}
	var host string
	for i, path := range in.Paths {
		b, h, ok := routeOf(&ing, path)
		switch {
		case !ok:
			return Route{}, fmt.Errorf("ingress %s: no rule routes %s (the load's request path)", ing.Name, path)
		case b.Service.Name != in.Service.Name || !samePort(b.Service.Port, in.Port):
			return Route{}, fmt.Errorf("ingress %s: routes %s to service %s port %s, not to the target's service %s port %s",
				ing.Name, path, b.Service.Name, backendPort(b.Service.Port), in.Service.Name, portName(in.Port))
		case i > 0 && h != host:
			return Route{}, fmt.Errorf("ingress %s: routes the load's paths under two hosts (%q, %q)", ing.Name, host, h)
		}
		host = h
	}
	return Route{Ingress: ing.Name, Host: requestHost(host)}, nil
}

// findObject is the object of kind named name, and the names of every object of that kind.
func findObject(objs []*unstructured.Unstructured, kind, name string) (*unstructured.Unstructured, []string) {
	var found *unstructured.Unstructured
	var names []string
	for _, o := range objs {
		if o.GetKind() != kind {
			continue
		}
		names = append(names, o.GetName())
		if o.GetName() == name {
			found = o
		}
	}
	if name == "" && len(names) == 1 {
		// A door asked for without its object (run --via ingress) takes the only one there is.
		for _, o := range objs {
			if o.GetKind() == kind {
				found = o
			}
		}
	}
	return found, names
}

// notFound is the one line for a door whose object is not in the manifests: the name the target
// file (or --via) gave, or, with none, how many there were to choose from.
func notFound(field, kind, name string, names []string) error {
	switch {
	case name == "" && len(names) == 0:
		return fmt.Errorf("--via: the manifests hold no %s for the load to come through", kind)
	case name == "":
		return fmt.Errorf("--via: the manifests hold %d %s objects (%s): name one (KIND=NAME)", len(names), kind, orNone(names))
	}
	plural := kind + "s"
	if strings.HasSuffix(kind, "s") {
		plural = kind + "es"
	}
	return fmt.Errorf("%s: no %s %s in the manifests (%s: %s)", field, kind, name, plural, orNone(names))
}

// servicesOf are the Services of the manifests by name.
func servicesOf(objs []*unstructured.Unstructured) map[string]*corev1.Service {
	services := map[string]*corev1.Service{}
	for _, o := range objs {
		if o.GetKind() == "Service" {
			var s corev1.Service
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &s); err == nil {
				services[s.Name] = &s
			}
		}
	}
	return services
}

// backends lists every backend the Ingress names.
func backends(ing *netv1.Ingress) []netv1.IngressBackend {
	var out []netv1.IngressBackend
	if ing.Spec.DefaultBackend != nil {
		out = append(out, *ing.Spec.DefaultBackend)
	}
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for _, p := range r.HTTP.Paths {
			out = append(out, p.Backend)
		}
	}
	return out
}

// routeOf is the backend and rule host a request for path goes to: the rule with the longest
// matching path (an Exact match before a prefix), else the default backend (any host).
func routeOf(ing *netv1.Ingress, path string) (netv1.IngressBackend, string, bool) {
	var best *netv1.HTTPIngressPath
	var host string
	score := -1
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for i, p := range r.HTTP.Paths {
			s := matchScore(p, path)
			if s > score {
				best, host, score = &r.HTTP.Paths[i], r.Host, s
			}
		}
	}
	switch {
	case best != nil:
		return best.Backend, host, true
	case ing.Spec.DefaultBackend != nil:
		return *ing.Spec.DefaultBackend, "", true
	}
	return netv1.IngressBackend{}, "", false
}

// matchScore ranks how p matches the request path (without its query): -1 not at all, else the
// length of p's path, an Exact match above every prefix.
func matchScore(p netv1.HTTPIngressPath, path string) int {
	path, _, _ = strings.Cut(path, "?")
	want := p.Path
	if want == "" {
		want = "/"
	}
	typ := netv1.PathTypeImplementationSpecific
	if p.PathType != nil {
		typ = *p.PathType
	}
	switch typ {
	case netv1.PathTypeExact:
		if path == want {
			return 1 << 20
		}
	case netv1.PathTypePrefix:
		// Element-wise: /foo matches /foo and /foo/bar, not /foobar.
		trimmed := strings.TrimSuffix(want, "/")
		if trimmed == "" || path == trimmed || strings.HasPrefix(path, trimmed+"/") {
			return len(want)
		}
	default:
		// Traefik's implementation-specific matching is a plain prefix.
		if strings.HasPrefix(path, want) {
			return len(want)
		}
	}
	return -1
}

// requestHost is a Host header a rule's host accepts: a wildcard's first label is filled in.
func requestHost(h string) string {
	if rest, ok := strings.CutPrefix(h, "*."); ok {
		return "probegate." + rest
	}
	return h
}

func hasPort(svc *corev1.Service, p netv1.ServiceBackendPort) bool {
	for _, sp := range svc.Spec.Ports {
		if samePort(p, sp) {
			return true
		}
	}
	return false
}

func samePort(p netv1.ServiceBackendPort, sp corev1.ServicePort) bool {
	if p.Name != "" {
		return p.Name == sp.Name
	}
	return p.Number == sp.Port
}

func backendPort(p netv1.ServiceBackendPort) string {
	if p.Name != "" {
		return p.Name
	}
	return strconv.Itoa(int(p.Number))
}

func portName(p corev1.ServicePort) string {
	if p.Name != "" {
		return p.Name + " (" + strconv.Itoa(int(p.Port)) + ")"
	}
	return strconv.Itoa(int(p.Port))
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// rewriteIngress gives the scenario's copy of the user's Ingress the namespace controller's class,
// by annotation (spec.ingressClassName would need an IngressClass object), and drops its TLS: the
// load speaks plain HTTP to the controller's web entry point. Other Ingresses are left alone, and
// the controller serves none of them.
func rewriteIngress(name string) func(o *unstructured.Unstructured) {
	return func(o *unstructured.Unstructured) {
		if o.GetKind() != "Ingress" || o.GetName() != name {
			return
		}
		unstructured.RemoveNestedField(o.Object, "spec", "ingressClassName")
		unstructured.RemoveNestedField(o.Object, "spec", "tls")
		a := o.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[classAnnotation] = IngressClass
		o.SetAnnotations(a)
	}
}

// ingressArgs are the Kubernetes Ingress provider's flags: ns alone, with no cluster-scoped
// lookups, and the class probegate gives the user's Ingress.
func ingressArgs(ns string) []string {
	return []string{
		"--providers.kubernetesingress=true",
		"--providers.kubernetesingress.namespaces=" + ns,
		"--providers.kubernetesingress.ingressclass=" + IngressClass,
		"--providers.kubernetesingress.disableclusterscoperesources=true",
	}
}

// traefikArgs are the controller's flags: its entry points and /ping, the provider's flags, and the
// access log as JSON lines on stdout holding only what attribution reads (the load's id and
// sequence headers included); its own log at ERROR.
func traefikArgs(provider []string) []string {
	args := []string{
		"--entrypoints.web.address=:" + strconv.Itoa(webPort),
		"--entrypoints.traefik.address=:" + strconv.Itoa(pingPort),
		"--ping=true",
	}
	args = append(args, provider...)
	args = append(args,
		"--log.level=ERROR",
		"--global.checknewversion=false",
		"--global.sendanonymoususage=false",
		"--accesslog=true",
		"--accesslog.format=json",
		"--accesslog.fields.defaultmode=drop",
		"--accesslog.fields.headers.defaultmode=drop",
		"--accesslog.fields.headers.names."+LoadIDHeader+"=keep",
		"--accesslog.fields.headers.names."+SeqHeader+"=keep",
	)
	for _, f := range accessLogFields {
		args = append(args, "--accesslog.fields.names."+f+"=keep")
	}
	return args
}

// readVerbs are what a Role lets the controller do with what it only reads.
var readVerbs = []string{"get", "list", "watch"}

// planTraefik is the ingress controller of one scenario namespace: a ServiceAccount with a Role on
// that namespace only (no ClusterRole: cluster-scoped lookups are off), the Deployment, and a
// NodePort Service the load goes to.
func planTraefik(r Route, ns string) Plan {
	p := traefikPlan(ns, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services", "secrets"}, Verbs: readVerbs},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: readVerbs},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: readVerbs},
	}, ingressArgs(ns))
	p.Rewrite = rewriteIngress(r.Ingress)
	return p
}

// traefikPlan is a Traefik of one scenario namespace with provider's flags: a ServiceAccount with
// a Role of rules on that namespace, the Deployment, and a NodePort Service the load goes to.
func traefikPlan(ns string, rules []rbacv1.PolicyRule, provider []string) Plan {
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: traefikLabels}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: meta(traefikName)}
	role := &rbacv1.Role{ObjectMeta: meta(traefikName), Rules: rules}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: meta(traefikName),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: traefikName},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: traefikName, Namespace: ns}},
	}
	one := int32(1)
	grace := int64(10)
	deploy := &appsv1.Deployment{
		ObjectMeta: meta(traefikName),
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: traefikLabels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: traefikLabels},
				Spec: corev1.PodSpec{
					ServiceAccountName:            traefikName,
					TerminationGracePeriodSeconds: &grace,
					EnableServiceLinks:            new(bool),
					Containers: []corev1.Container{{
						Name: "traefik", Image: TraefikImage, ImagePullPolicy: corev1.PullIfNotPresent,
						Args: traefikArgs(provider),
						Ports: []corev1.ContainerPort{
							{Name: "web", ContainerPort: webPort},
							{Name: "ping", ContainerPort: pingPort},
						},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ping", Port: intstr.FromString("ping")}},
							PeriodSeconds: 1, TimeoutSeconds: 1, FailureThreshold: 3,
						},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m"), corev1.ResourceMemory: resource.MustParse("48Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: new(bool),
							ReadOnlyRootFilesystem:   ptrTrue(),
							RunAsNonRoot:             ptrTrue(),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
	svc := &corev1.Service{
		ObjectMeta: meta(traefikName),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: traefikLabels,
			Ports:    []corev1.ServicePort{{Name: "web", Port: 80, TargetPort: intstr.FromString("web")}},
		},
	}
	return Plan{
		Objects:    []runtime.Object{sa, role, binding, deploy, svc},
		Deployment: traefikName, Service: traefikName, Container: "traefik",
		Selector: labels.SelectorFromSet(traefikLabels).String(),
	}
}

func ptrTrue() *bool { t := true; return &t }
