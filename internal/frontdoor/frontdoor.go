// Package frontdoor holds the ways the load reaches a target's pods, each registered by its own
// file as fault types and load protocols are: kube-proxy through a NodePort Service (the default),
// a real ingress controller serving the user's Ingress, and a real Gateway API implementation
// serving the user's HTTPRoute. A door says what it checks in the user's manifests, what it
// installs once in the cluster, what it deploys beside the app in a scenario's namespace, where
// the load goes and, when it keeps its own record, which pod served each request. Nothing else
// switches on it.
package frontdoor

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
)

// Definition is one front door as its file registers it.
type Definition struct {
	Kind string // the target file's frontDoor.kind (scenario.FrontDoorKubeProxy, …)
	Doc  string // how the load reaches the pods, one sentence
	// Images are the images the door runs in each scenario's namespace (loaded into kind first).
	Images []string
	// Resolve checks the door against the app's manifests when the target file is read and
	// returns its route; an error is one line naming the object at fault.
	Resolve func(in Input) (Route, error)
	// Setup installs what the door needs outside any namespace (CRDs, a class, a ClusterRole)
	// before the first scenario; it must be idempotent: every run calls it. nil needs nothing.
	Setup func(ctx context.Context, c Cluster) error
	// Plan is what the door deploys beside the app into a namespace; nil deploys nothing.
	Plan func(r Route, ns string) Plan
	// Record starts reading the door's own record of the requests (a controller's access log)
	// before the load starts; nil when the door keeps none (kube-proxy: the node's conntrack
	// names the pods, in the runner).
	Record func(ctx context.Context, client kubernetes.Interface, door Opened) (Recorder, error)
}

// Cluster is the cluster a door's Setup installs into.
type Cluster struct {
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	Log     *slog.Logger
}

// Input is what a door checks: the app's objects and what the load asks for.
type Input struct {
	Door     scenario.FrontDoor
	Objects  []*unstructured.Unstructured
	Service  *corev1.Service    // the target Service
	Port     corev1.ServicePort // the port the load uses
	Paths    []string           // the request paths the load sends (default, and a takes example)
	Protocol string
}

// Route is a resolved door: what it serves and how a request names it.
type Route struct {
	Kind string
	// Ingress names the user's Ingress the controller serves (ingress door).
	Ingress string
	// HTTPRoute names the user's HTTPRoute the gateway serves (gateway door).
	HTTPRoute string
	// Host is the Host header the load sends ("" sends the address it dials).
	Host string
}

// Serves names the user's object the door serves ("ingress shop", "httproute shop"; "" for none).
func (r Route) Serves() string {
	switch {
	case r.Ingress != "":
		return "ingress " + r.Ingress
	case r.HTTPRoute != "":
		return "httproute " + r.HTTPRoute
	}
	return ""
}

// Plan is what a door deploys into a scenario's namespace.
type Plan struct {
	// Objects are applied in order, their namespace set to the scenario's (typed objects, or
	// unstructured ones of a kind the cluster serves once Setup ran).
	Objects []runtime.Object
	// Rewrite changes the scenario's copy of one of the app's objects before it is applied (the
	// Ingress's class); nil leaves them as they are.
	Rewrite func(o *unstructured.Unstructured)
	// Deployment is the controller's Deployment, waited for until ready; Service its NodePort
	// Service the load goes to; Selector and Container find its pods and their log.
	Deployment, Service, Selector, Container string
}

// Opened is a door deployed into a scenario's namespace: where the load goes and how to read the
// door's record. The zero value is kube-proxy's (the load Service, no record).
type Opened struct {
	Route
	Namespace string
	// NodePort is the controller's NodePort Service's port (0 for kube-proxy: the load Service).
	NodePort int32
	// Selector and Container find the controller's pods and the container whose log is the record.
	Selector, Container string
}

// Recorder is a door's record of the requests being read.
type Recorder interface {
	// Attribute waits, up to wait, until the record holds every answered request of the load
	// whose id is loadID, stops reading, and returns reqs with what the record says of each
	// (timeline.Request's Upstream, DoorRetries, NoUpstream, and the pod when no header named it).
	// entries are the timeline's (EndpointSlice addresses name the pods).
	Attribute(ctx context.Context, loadID string, reqs []timeline.Request, entries []timeline.Entry, wait time.Duration) ([]timeline.Request, timeline.DoorAttribution, error)
	// Stop stops reading; it is safe to call more than once and after Attribute.
	Stop()
}

// Request headers the load sends through a door that keeps its own record: the load's id, and
// vegeta's sequence number of each request (timeline.Request.Seq), which vegeta sets itself.
const (
	LoadIDHeader = "X-Probegate-Load"
	SeqHeader    = "X-Vegeta-Seq"
)

var registry = map[string]Definition{}

// Register adds a door; it panics on a duplicate or malformed one (init time).
func Register(d Definition) {
	if d.Kind == "" || d.Doc == "" || d.Resolve == nil {
		panic(fmt.Sprintf("frontdoor: %q needs a kind, a doc and a resolver", d.Kind))
	}
	if _, dup := registry[d.Kind]; dup {
		panic(fmt.Sprintf("frontdoor: %q registered twice", d.Kind))
	}
	registry[d.Kind] = d
}

// Lookup returns the door registered for kind ("" is kube-proxy).
func Lookup(kind string) (Definition, bool) {
	if kind == "" {
		kind = scenario.FrontDoorKubeProxy
	}
	d, ok := registry[kind]
	return d, ok
}

// Kinds lists the registered doors, sorted.
func Kinds() []string { return slices.Sorted(maps.Keys(registry)) }

// Setup runs the Setup of the door registered for kind, when it has one.
func Setup(ctx context.Context, kind string, c Cluster) error {
	d, ok := Lookup(kind)
	if !ok || d.Setup == nil {
		return nil
	}
	if err := d.Setup(ctx, c); err != nil {
		return fmt.Errorf("front door %s: cluster set-up: %w", d.Kind, err)
	}
	return nil
}

// Resolve checks the target's door against its manifests.
func Resolve(in Input) (Route, error) {
	d, ok := Lookup(in.Door.Kind)
	if !ok {
		return Route{}, fmt.Errorf("frontDoor: no door %q (want %s)", in.Door.Kind, strings.Join(Kinds(), " or "))
	}
	if in.Door.Kind == "" {
		in.Door.Kind = d.Kind
	}
	r, err := d.Resolve(in)
	if err != nil {
		return Route{}, err
	}
	r.Kind = d.Kind
	return r, nil
}
