package deploy

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/frontdoor"
	"github.com/probegate/probegate/internal/scenario"
)

// Names of what probegate adds beside a user's app in its namespace.
const (
	// LoadServiceName is the NodePort Service the load reaches the workload through: the target
	// Service's selector and port, published on the slot's NodePort.
	LoadServiceName = "probegate-load"
	// FieldManager owns the fields probegate applies.
	FieldManager = "probegate"
)

// AppOptions say where to install an App.
type AppOptions struct {
	Namespace string
	Slot      int
	// Replicas is the workload's replica count for the scenario (the manifests' own when 0).
	Replicas int32
	// Patch is a strategic-merge patch of the workload (YAML or JSON, as `probegate tune -o patch`
	// writes it), applied to the scenario's copy before anything is applied: tune --verify's settings.
	Patch          []byte
	ToxiproxyImage string // default DefaultToxiproxyImage
	// NoLoopback leaves the loopback URLs empty (see Request.NoLoopback).
	NoLoopback bool
	Timeout    time.Duration
	Log        *slog.Logger
}

// AppEndpoints tell the harness where an installed App answers.
type AppEndpoints struct {
	Namespace string
	// Deployment is the workload's name when it is a Deployment ("" for a StatefulSet).
	Deployment string
	Workload   string // "deployment/NAME"
	Service    string
	Container  string
	Selector   string
	URL        string // the load's base URL on loopback
	// ToxiproxyURL is the interposed toxiproxy's API on loopback; Proxies maps each dependency to
	// its proxy; both empty without dependencies.
	ToxiproxyURL      string
	ToxiproxySelector string
	Proxies           map[string]Proxy
	// Door is the front door the load goes through (zero: kube-proxy, URL).
	Door frontdoor.Opened
}

// Proxy is the toxiproxy proxy in front of one dependency.
type Proxy struct {
	Name     string
	Protocol string
}

// InstallApp applies app into opts.Namespace (which must exist): the interposed toxiproxy first when
// the app declares dependencies, then every object of the manifests with server-side apply, then the
// load's NodePort Service. It waits until every Deployment and StatefulSet is ready, the target
// Service lists Replicas ready endpoints, and the default request answers on loopback.
func InstallApp(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, mapper meta.RESTMapper, app *App, opts AppOptions) (AppEndpoints, error) {
	if opts.Timeout == 0 {
		opts.Timeout = 4 * time.Minute
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.ToxiproxyImage == "" {
		opts.ToxiproxyImage = DefaultToxiproxyImage
	}
	ns := opts.Namespace
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	start := time.Now()
	ep := AppEndpoints{
		Namespace: ns, Workload: app.Spec.Workload.String(), Service: app.Service.Name, Container: app.Container,
		Selector: labels.SelectorFromSet(app.Selector).String(),
	}
	if app.Spec.Workload.Kind == "Deployment" {
		ep.Deployment = app.Spec.Workload.Name
	}
	fail := func(err error) (AppEndpoints, error) {
		return ep, fmt.Errorf("deploy target %s: %w", app.Spec.Name, err)
	}

	objs, err := app.instance(opts.Replicas, opts.Patch)
	if err != nil {
		return fail(err)
	}
	var plan frontdoor.Plan
	if d, ok := frontdoor.Lookup(app.Door.Kind); ok && d.Plan != nil {
		plan = d.Plan(app.Door, ns)
		if plan.Rewrite != nil {
			for _, o := range objs {
				plan.Rewrite(o)
			}
		}
	}
	if len(app.Dependencies) > 0 {
		ip := interposeFor(app, opts.Slot, opts.ToxiproxyImage)
		for _, o := range ip.objects {
			o.Namespace = ns
		}
		for _, o := range ip.typed() {
			if err := apply(ctx, client, o); err != nil {
				return fail(fmt.Errorf("interpose toxiproxy: %w", err))
			}
		}
		if err := poll(ctx, "deployment "+ns+"/"+interposeName, deploymentReady(client, ns, interposeName, 1)); err != nil {
			return fail(err)
		}
		objs = ip.repoint(objs)
		ep.ToxiproxySelector = labels.SelectorFromSet(interposeLabels).String()
		ep.Proxies = ip.proxies
		if !opts.NoLoopback {
			ep.ToxiproxyURL = hostURL(cluster.ToxiproxyNodePort(opts.Slot))
		}
		if ep.ToxiproxyURL != "" {
			for _, p := range ip.proxies {
				if err := poll(ctx, "toxiproxy proxy "+p.Name, proxyExists(ep.ToxiproxyURL, p.Name)); err != nil {
					return fail(err)
				}
			}
		}
	}
	for _, o := range objs {
		if err := applyUnstructured(ctx, dyn, mapper, ns, o); err != nil {
			return fail(err)
		}
	}
	nodePort := cluster.TargetNodePort(opts.Slot)
	if err := apply(ctx, client, loadService(app, ns, nodePort)); err != nil {
		return fail(err)
	}
	if !opts.NoLoopback {
		ep.URL = hostURL(nodePort)
	}

	var steps []step
	for _, o := range objs {
		want := replicasOf(o)
		switch o.GetKind() {
		case "Deployment":
			steps = append(steps, step{"deployment " + ns + "/" + o.GetName(), deploymentReady(client, ns, o.GetName(), want)})
		case "StatefulSet":
			steps = append(steps, step{"statefulset " + ns + "/" + o.GetName(), statefulSetReady(client, ns, o.GetName(), want)})
		}
	}
	want := replicasOf(app.workloadIn(objs))
	steps = append(steps, step{"endpoints of service " + ns + "/" + app.Service.Name, endpointsReady(client, ns, app.Service.Name, want)})
	switch {
	case ep.URL == "":
	case app.Spec.Protocol == scenario.LoadGRPC:
		// An HTTP GET is no gRPC call: a health check call is (any answer shows the route works).
		steps = append(steps, step{"gRPC call through NodePort " + ep.URL, answersGRPC(ep.URL)})
	default:
		steps = append(steps, step{"GET " + app.Spec.Requests.Default + " through NodePort " + ep.URL,
			answers(ep.URL + app.Spec.Requests.Default)})
	}
	for _, s := range steps {
		if err := poll(ctx, s.what, s.check); err != nil {
			return fail(err)
		}
	}
	if ep.Door, err = openDoor(ctx, client, func(o *unstructured.Unstructured) error {
		return applyUnstructured(ctx, dyn, mapper, ns, o)
	}, app.Door, plan, ns); err != nil {
		return fail(err)
	}
	opts.Log.Info("target ready", "target", app.Spec.Name, "namespace", ns, "replicas", want, "url", ep.URL,
		"dependencies", len(app.Dependencies), "door", app.Door.Kind, "took", time.Since(start).Round(time.Millisecond))
	return ep, nil
}

// instance is a deep copy of the app's objects for one scenario, with the workload scaled and
// patched (when patch is set) and no fixed node ports. A HorizontalPodAutoscaler of the workload
// is pinned to that count: the scenarios judge a fixed set of replicas, and an autoscaler (without
// metrics on kind) would otherwise move it.
func (app *App) instance(replicas int32, patch []byte) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, len(app.Objects))
	for i, o := range app.Objects {
		out[i] = o.DeepCopy()
		if o.GetKind() == "Service" {
			freeNodePorts(out[i])
		}
		if o == app.Workload && len(patch) > 0 {
			if err := patchUnstructured(out[i], patch); err != nil {
				return nil, err
			}
		}
		if replicas <= 0 {
			continue
		}
		switch {
		case o == app.Workload:
			_ = unstructured.SetNestedField(out[i].Object, int64(replicas), "spec", "replicas")
		case app.scales(o):
			_ = unstructured.SetNestedField(out[i].Object, int64(replicas), "spec", "minReplicas")
			_ = unstructured.SetNestedField(out[i].Object, int64(replicas), "spec", "maxReplicas")
		}
	}
	return out, nil
}

// freeNodePorts drops fixed nodePorts from a Service: every scenario runs its own copy side by
// side, and a node port can be held by one Service only; the API allocates free ones instead.
func freeNodePorts(svc *unstructured.Unstructured) {
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	for _, p := range ports {
		if m, ok := p.(map[string]any); ok {
			delete(m, "nodePort")
		}
	}
	if len(ports) > 0 {
		_ = unstructured.SetNestedSlice(svc.Object, ports, "spec", "ports")
	}
}

// scales reports whether o is a HorizontalPodAutoscaler of the workload.
func (app *App) scales(o *unstructured.Unstructured) bool {
	if o.GetKind() != "HorizontalPodAutoscaler" {
		return false
	}
	kind, _, _ := unstructured.NestedString(o.Object, "spec", "scaleTargetRef", "kind")
	name, _, _ := unstructured.NestedString(o.Object, "spec", "scaleTargetRef", "name")
	return kind == app.Workload.GetKind() && name == app.Workload.GetName()
}

// workloadIn finds the workload's copy among objs.
func (app *App) workloadIn(objs []*unstructured.Unstructured) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == app.Workload.GetKind() && o.GetName() == app.Workload.GetName() {
			return o
		}
	}
	return app.Workload
}

// replicasOf is a workload's spec.replicas (1 when unset, as the API defaults it).
func replicasOf(o *unstructured.Unstructured) int32 {
	n, found, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
	if !found {
		return 1
	}
	return int32(n)
}

// applyUnstructured server-side-applies o into ns; cluster-scoped or unknown kinds are errors.
func applyUnstructured(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, ns string, o *unstructured.Unstructured) error {
	gvk := o.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s (%s): the cluster does not serve this kind: %w", describeObj(o), o.GetAPIVersion(), err)
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return fmt.Errorf("%s is cluster-scoped: it cannot be applied into each scenario's namespace", describeObj(o))
	}
	o.SetNamespace(ns)
	if _, err := dyn.Resource(m.Resource).Namespace(ns).Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return fmt.Errorf("apply %s: %w", describeObj(o), err)
	}
	return nil
}

// loadService publishes the target Service's selector and chosen port on the slot's NodePort.
func loadService(app *App, ns string, nodePort int32) *corev1.Service {
	p := app.Port
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: LoadServiceName, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/part-of": "probegate"}},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: app.Service.Spec.Selector,
			Ports: []corev1.ServicePort{{Name: "load", Protocol: corev1.ProtocolTCP, Port: p.Port, TargetPort: p.TargetPort,
				NodePort: nodePort}},
		},
	}
}

// statefulSetReady reports whether the StatefulSet is rolled out with want ready replicas.
func statefulSetReady(client kubernetes.Interface, ns, name string, want int32) func(context.Context) (bool, string, error) {
	return func(ctx context.Context) (bool, string, error) {
		s, err := client.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		st := s.Status
		if st.ObservedGeneration >= s.Generation && st.ReadyReplicas == want && st.UpdatedReplicas == want && st.Replicas == want {
			return true, "", nil
		}
		missing := fmt.Sprintf("%d/%d ready, %d updated", st.ReadyReplicas, want, st.UpdatedReplicas)
		if why := podTrouble(ctx, client, ns, &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Selector: s.Spec.Selector}}); why != "" {
			if pullFailed(why) {
				return false, "", fmt.Errorf("%s: the image is not in the cluster, and nothing is ever pulled from a registry: load it first", why)
			}
			missing += "; " + why
		}
		return false, missing, nil
	}
}

// answers reports whether GET url answers below 400: the load's request is one the app serves. A
// 4xx is an error at once (every endpoint is ready by then: it will not go away by waiting).
func answers(url string) func(context.Context) (bool, string, error) {
	return httpCheck(url, 5*time.Second, func(code int) (bool, error) {
		if code >= 400 && code < 500 {
			return false, fmt.Errorf("GET %s answers %d %s: set requests.default in the target file to a path the app serves",
				url, code, http.StatusText(code))
		}
		return code < 400, nil
	})
}

// openDoor deploys the front door's controller beside the app (nothing for kube-proxy), waits until
// it is ready and reads the NodePort the API gave its Service. Typed objects are applied with
// client, unstructured ones (a Gateway) with applyObj.
func openDoor(ctx context.Context, client kubernetes.Interface, applyObj func(*unstructured.Unstructured) error, route frontdoor.Route, plan frontdoor.Plan, ns string) (frontdoor.Opened, error) {
	door := frontdoor.Opened{Route: route, Namespace: ns, Selector: plan.Selector, Container: plan.Container}
	if len(plan.Objects) == 0 {
		return door, nil
	}
	for _, o := range plan.Objects {
		var err error
		if u, ok := o.(*unstructured.Unstructured); ok {
			err = applyObj(u)
		} else {
			err = apply(ctx, client, o)
		}
		if err != nil {
			return door, fmt.Errorf("front door %s: %w", route.Kind, err)
		}
	}
	if err := poll(ctx, "deployment "+ns+"/"+plan.Deployment, deploymentReady(client, ns, plan.Deployment, 1)); err != nil {
		return door, fmt.Errorf("front door %s: %w", route.Kind, err)
	}
	svc, err := client.CoreV1().Services(ns).Get(ctx, plan.Service, metav1.GetOptions{})
	if err != nil {
		return door, fmt.Errorf("front door %s: service %s: %w", route.Kind, plan.Service, err)
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			door.NodePort = p.NodePort
			break
		}
	}
	if door.NodePort == 0 {
		return door, fmt.Errorf("front door %s: service %s has no NodePort", route.Kind, plan.Service)
	}
	return door, nil
}
