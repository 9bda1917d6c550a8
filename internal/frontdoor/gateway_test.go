package frontdoor

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/probegate/probegate/internal/scenario"
)

const routes = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop}
spec:
  parentRefs: [{name: shared, namespace: infra, sectionName: https}]
  hostnames: [shop.example, www.shop.example]
  rules:
  - backendRefs: [{name: web, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /api/}}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: Exact, value: /metrics}}]
    backendRefs: [{name: web, port: 9100}]
  - matches: [{path: {type: PathPrefix, value: /work}, headers: [{name: X-Canary, value: "1"}]}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /split}}]
    backendRefs: [{name: web, port: 8080, weight: 90}, {name: api, port: 80, weight: 10}]
  - matches: [{path: {type: PathPrefix, value: /old}}]
    filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /new}}}]
  - matches: [{path: {type: PathPrefix, value: /post}, method: POST}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /drained}}]
    backendRefs: [{name: web, port: 8080}, {name: api, port: 80, weight: 0}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wild}
spec:
  hostnames: ["*.shop.example"]
  rules:
  - matches: [{path: {type: Exact, value: /work}}]
    backendRefs: [{name: web, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: anyhost}
spec:
  rules:
  - matches: [{path: {value: /work}}]
    backendRefs: [{name: web, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: dangling}
spec:
  rules: [{backendRefs: [{name: gone, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: badport}
spec:
  rules: [{backendRefs: [{name: web, port: 8081}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: noport}
spec:
  rules: [{backendRefs: [{name: web}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: elsewhere}
spec:
  rules: [{backendRefs: [{name: web, namespace: prod, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bucket}
spec:
  rules: [{backendRefs: [{group: example.com, kind: Bucket, name: web}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: regex}
spec:
  rules:
  - matches: [{path: {type: RegularExpression, value: "/w.*"}}]
    backendRefs: [{name: web, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: empty}
spec:
  rules: [{matches: [{path: {type: Exact, value: /work}}]}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: HTTPRoute
metadata: {name: beta}
spec:
  rules: [{backendRefs: [{name: web, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: shared}
spec:
  gatewayClassName: cilium
  listeners: [{name: https, port: 443, protocol: HTTPS}]
`

func gatewayInput(t *testing.T, route string, paths ...string) Input {
	in := input(t, "", paths...)
	in.Objects = append(in.Objects[:2], objects(t, routes)...) // the web and api Services, and the routes
	in.Door = scenario.FrontDoor{Kind: scenario.FrontDoorGateway, HTTPRoute: route}
	return in
}

func TestResolveGateway(t *testing.T) {
	cases := map[string]struct {
		in   Input
		want Route
	}{
		"catch-all rule, first hostname": {gatewayInput(t, "shop", "/work", "/slow?d=20s"), Route{HTTPRoute: "shop", Host: "shop.example"}},
		"prefix is per element":          {gatewayInput(t, "shop", "/apiary"), Route{HTTPRoute: "shop", Host: "shop.example"}},
		"prefix without its slash":       {gatewayInput(t, "shop", "/work", "/metrics/x"), Route{HTTPRoute: "shop", Host: "shop.example"}},
		"header match is not the load's": {gatewayInput(t, "shop", "/work/x"), Route{HTTPRoute: "shop", Host: "shop.example"}},
		"POST match is not the load's":   {gatewayInput(t, "shop", "/post"), Route{HTTPRoute: "shop", Host: "shop.example"}},
		"weight 0 takes nothing":         {gatewayInput(t, "shop", "/drained"), Route{HTTPRoute: "shop", Host: "shop.example"}},
		"wildcard host gets a label":     {gatewayInput(t, "wild", "/work"), Route{HTTPRoute: "wild", Host: "probegate.shop.example"}},
		"no hostnames: any host":         {gatewayInput(t, "anyhost", "/work/x"), Route{HTTPRoute: "anyhost"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := Resolve(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Kind = scenario.FrontDoorGateway
			if r != tc.want {
				t.Errorf("route %+v, want %+v", r, tc.want)
			}
			if r.Serves() != "httproute "+tc.want.HTTPRoute {
				t.Errorf("serves %q", r.Serves())
			}
		})
	}
}

func TestResolveGatewayErrors(t *testing.T) {
	grpc := gatewayInput(t, "shop", "/")
	grpc.Protocol = scenario.LoadGRPC
	beta := gatewayInput(t, "beta", "/")
	ours := gatewayInput(t, "shop", "/")
	ours.Objects[len(ours.Objects)-1].SetName(GatewayName)
	cases := map[string]struct {
		in   Input
		want string
	}{
		"no such route":         {gatewayInput(t, "shope", "/"), "frontDoor.httpRoute: no HTTPRoute shope in the manifests (HTTPRoutes: shop, wild, anyhost, dangling, badport, noport, elsewhere, bucket, regex, empty, beta)"},
		"old API":               {beta, "httproute beta: apiVersion gateway.networking.k8s.io/v1beta1: want gateway.networking.k8s.io/v1"},
		"our gateway's name":    {ours, "gateway probegate: probegate creates its own Gateway of that name"},
		"grpc":                  {grpc, "httproute shop: the gateway door carries HTTP load only"},
		"route to no service":   {gatewayInput(t, "dangling", "/"), "httproute dangling: routes to service gone, which is not in the manifests"},
		"route to no port":      {gatewayInput(t, "badport", "/"), "httproute badport: routes to service web port 8081, which it does not have"},
		"route without port":    {gatewayInput(t, "noport", "/"), "httproute noport: routes to service web port (none), which it does not have"},
		"other namespace":       {gatewayInput(t, "elsewhere", "/"), "httproute elsewhere: routes to service web in namespace prod: a backend must be in the route's own namespace"},
		"not a service":         {gatewayInput(t, "bucket", "/"), "httproute bucket: a backendRef of kind example.com/Bucket (web): only Services are served"},
		"prefix to another":     {gatewayInput(t, "shop", "/api/x"), "httproute shop: routes /api/x to service api port 80, not to the target's service web port http (8080)"},
		"prefix, slash dropped": {gatewayInput(t, "shop", "/api"), "routes /api to service api port 80"},
		"exact to another":      {gatewayInput(t, "shop", "/metrics"), "httproute shop: routes /metrics to service web port 9100"},
		"split with another":    {gatewayInput(t, "shop", "/split/x"), "routes /split/x to service api port 80"},
		"redirect":              {gatewayInput(t, "shop", "/old/x"), "httproute shop: redirects /old/x (a RequestRedirect filter)"},
		"exact misses":          {gatewayInput(t, "wild", "/work/x"), "httproute wild: no rule routes /work/x (the load's request path;"},
		"regex is not taken":    {gatewayInput(t, "regex", "/work"), "httproute regex: no rule routes /work"},
		"takes path checked":    {gatewayInput(t, "wild", "/work", "/slow?d=1s"), "httproute wild: no rule routes /slow?d=1s"},
		"no backends":           {gatewayInput(t, "empty", "/work"), "httproute empty: the rule for /work has no backendRefs"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Resolve(tc.in)
			switch {
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("err = %v, want %q", err, tc.want)
			case strings.Contains(err.Error(), "\n"):
				t.Errorf("not one line: %q", err)
			}
		})
	}
}

func TestPlanGateway(t *testing.T) {
	p := planGateway(Route{Kind: scenario.FrontDoorGateway, HTTPRoute: "shop", Host: "shop.example"}, "s1")
	var kinds []string
	for _, o := range p.Objects {
		kinds = append(kinds, fmt.Sprintf("%T", o))
		switch o := o.(type) {
		case *unstructured.Unstructured:
			checkGatewayObject(t, o)
		case *rbacv1.Role:
			for _, r := range o.Rules {
				for _, res := range r.Resources {
					writes := slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" && v != "watch" })
					if writes && !strings.HasSuffix(res, "/status") {
						t.Errorf("the gateway's role writes %s: %+v", res, r)
					}
				}
			}
		case *appsv1.Deployment:
			args := o.Spec.Template.Spec.Containers[0].Args
			for _, want := range []string{
				"--providers.kubernetesgateway=true",
				"--providers.kubernetesgateway.namespaces=s1",
				"--providers.kubernetesgateway.labelselector=app.kubernetes.io/part-of=probegate",
				"--entrypoints.web.address=:8000",
				"--accesslog.format=json",
				"--accesslog.fields.names.ServiceAddr=keep",
				"--accesslog.fields.headers.names.X-Vegeta-Seq=keep",
			} {
				if !slices.Contains(args, want) {
					t.Errorf("no %s in %q", want, args)
				}
			}
			if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "kubernetesingress") }) {
				t.Errorf("the ingress provider is on: %q", args)
			}
		case *corev1.Service:
			if o.Spec.Type != corev1.ServiceTypeNodePort {
				t.Errorf("service %+v", o.Spec)
			}
		}
	}
	if len(p.Objects) != 6 || kinds[0] != "*unstructured.Unstructured" {
		t.Errorf("objects: %v", kinds)
	}
	if p.Deployment == "" || p.Service == "" || p.Selector == "" || p.Container != "traefik" {
		t.Errorf("plan %+v", p)
	}

	objs := objects(t, routes)
	for _, o := range objs {
		p.Rewrite(o)
	}
	refs, _, _ := unstructured.NestedSlice(objs[0].Object, "spec", "parentRefs")
	want := []any{map[string]any{"group": gatewayGroup, "kind": "Gateway", "name": GatewayName, "sectionName": "web"}}
	if fmt.Sprint(refs) != fmt.Sprint(want) {
		t.Errorf("parentRefs %v, want %v", refs, want)
	}
	if _, ok, _ := unstructured.NestedSlice(objs[1].Object, "spec", "parentRefs"); ok {
		t.Error("another HTTPRoute was attached to probegate's Gateway")
	}
	if cls, _, _ := unstructured.NestedString(objs[len(objs)-1].Object, "spec", "gatewayClassName"); cls != "cilium" {
		t.Errorf("the user's Gateway was changed: class %q", cls)
	}
}

// checkGatewayObject checks probegate's Gateway: its class, and one HTTP listener on the web entry
// point's port taking routes of its own namespace.
func checkGatewayObject(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	if o.GetKind() != "Gateway" || o.GetAPIVersion() != "gateway.networking.k8s.io/v1" || o.GetName() != GatewayName || o.GetNamespace() != "s1" {
		t.Errorf("gateway %s %s %s/%s", o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
	}
	if cls, _, _ := unstructured.NestedString(o.Object, "spec", "gatewayClassName"); cls != GatewayClass {
		t.Errorf("class %q", cls)
	}
	ls, _, _ := unstructured.NestedSlice(o.Object, "spec", "listeners")
	if len(ls) != 1 {
		t.Fatalf("listeners %v", ls)
	}
	l := ls[0].(map[string]any)
	from, _, _ := unstructured.NestedString(l, "allowedRoutes", "namespaces", "from")
	if l["port"] != int64(webPort) || l["protocol"] != "HTTP" || l["name"] != "web" || from != "Same" {
		t.Errorf("listener %v", l)
	}
}

func TestBackendRefKinds(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		ref  backendRef
		ok   bool
		name string
	}{
		{backendRef{}, true, "Service"},
		{backendRef{Group: s("core"), Kind: s("Service")}, true, "core/Service"},
		{backendRef{Kind: s("TraefikService")}, false, "TraefikService"},
		{backendRef{Group: s("example.com"), Kind: s("Bucket")}, false, "example.com/Bucket"},
	} {
		if tc.ref.isService() != tc.ok || tc.ref.groupKind() != tc.name {
			t.Errorf("%+v: service %v, kind %s", tc.ref, tc.ref.isService(), tc.ref.groupKind())
		}
	}
}
