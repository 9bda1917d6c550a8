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
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/probegate/probegate/internal/scenario"
)

const manifests = `
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 8080}, {name: metrics, port: 9100}]
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports: [{port: 80}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop}
spec:
  ingressClassName: nginx
  tls: [{hosts: [shop.example], secretName: shop-tls}]
  rules:
  - host: shop.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}
      - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
      - {path: /metrics, pathType: Exact, backend: {service: {name: web, port: {number: 9100}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: wild}
spec:
  defaultBackend: {service: {name: web, port: {number: 8080}}}
  rules:
  - host: "*.shop.example"
    http:
      paths:
      - {path: /work, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 8080}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: dangling}
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: gone, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: badport}
spec:
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {name: grpc}}}}
`

func objects(t *testing.T, docs string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, d := range strings.Split(docs, "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

func input(t *testing.T, ingress string, paths ...string) Input {
	objs := objects(t, manifests)
	svc := &corev1.Service{}
	svc.Name = "web"
	return Input{
		Door: scenario.FrontDoor{Kind: scenario.FrontDoorIngress, Ingress: ingress}, Objects: objs,
		Service: svc, Port: corev1.ServicePort{Name: "http", Port: 8080}, Paths: paths, Protocol: scenario.LoadHTTP,
	}
}

func TestResolveIngress(t *testing.T) {
	r, err := Resolve(input(t, "shop", "/work", "/slow?d=20s"))
	if err != nil {
		t.Fatal(err)
	}
	if r != (Route{Kind: scenario.FrontDoorIngress, Ingress: "shop", Host: "shop.example"}) {
		t.Errorf("route %+v", r)
	}
	// A wildcard host gets a first label; the default backend takes what no rule does.
	if r, err = Resolve(input(t, "wild", "/work/x")); err != nil || r.Host != "probegate.shop.example" {
		t.Errorf("wildcard: %+v, %v", r, err)
	}
	if r, err = Resolve(input(t, "wild", "/other")); err != nil || r.Host != "" {
		t.Errorf("default backend: %+v, %v", r, err)
	}
	// kube-proxy needs nothing of the manifests.
	in := input(t, "")
	in.Door = scenario.FrontDoor{}
	if r, err = Resolve(in); err != nil || r.Kind != scenario.FrontDoorKubeProxy {
		t.Errorf("kube-proxy: %+v, %v", r, err)
	}
}

func TestResolveIngressErrors(t *testing.T) {
	cases := map[string]struct {
		in   Input
		want string
	}{
		"no such ingress":       {input(t, "shope", "/"), "frontDoor.ingress: no Ingress shope in the manifests (Ingresses: shop, wild, dangling, badport)"},
		"route to no service":   {input(t, "dangling", "/"), "ingress dangling: routes to service gone, which is not in the manifests"},
		"route to no port":      {input(t, "badport", "/"), "ingress badport: routes to service web port grpc, which it does not have"},
		"path to another":       {input(t, "shop", "/api/x"), "ingress shop: routes /api/x to service api port 80, not to the target's service web port http (8080)"},
		"exact to another":      {input(t, "shop", "/metrics"), "routes /metrics to service web port 9100"},
		"prefix is per element": {input(t, "shop", "/apiary"), ""}, // not /api's: the / rule's
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Resolve(tc.in)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("err = %v, want none", err)
			case tc.want == "":
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("err = %v, want %q", err, tc.want)
			case strings.Contains(err.Error(), "\n"):
				t.Errorf("not one line: %q", err)
			}
		})
	}
	in := input(t, "shop", "/")
	in.Objects[2].SetAPIVersion("extensions/v1beta1")
	if _, err := Resolve(in); err == nil || !strings.Contains(err.Error(), "want networking.k8s.io/v1") {
		t.Errorf("old API: err = %v", err)
	}
}

func TestPlanTraefik(t *testing.T) {
	p := planTraefik(Route{Kind: scenario.FrontDoorIngress, Ingress: "shop", Host: "shop.example"}, "s1")
	var kinds []string
	for _, o := range p.Objects {
		kinds = append(kinds, fmt.Sprintf("%T", o))
		switch o := o.(type) {
		case *rbacv1.Role:
			for _, r := range o.Rules {
				if slices.Contains(r.Verbs, "create") || slices.Contains(r.Verbs, "update") || slices.Contains(r.Verbs, "*") {
					t.Errorf("the controller's role writes: %+v", r)
				}
			}
			if o.Namespace != "s1" {
				t.Errorf("role in %q", o.Namespace)
			}
		case *rbacv1.RoleBinding:
			if o.RoleRef.Kind != "Role" || o.Subjects[0].Namespace != "s1" {
				t.Errorf("binding %+v", o)
			}
		case *appsv1.Deployment:
			args := o.Spec.Template.Spec.Containers[0].Args
			for _, want := range []string{
				"--providers.kubernetesingress.namespaces=s1",
				"--providers.kubernetesingress.ingressclass=" + IngressClass,
				"--providers.kubernetesingress.disableclusterscoperesources=true",
				"--accesslog.format=json",
				"--accesslog.fields.names.ServiceAddr=keep",
				"--accesslog.fields.headers.names.X-Vegeta-Seq=keep",
				"--accesslog.fields.headers.names.X-Probegate-Load=keep",
			} {
				if !slices.Contains(args, want) {
					t.Errorf("no %s in %q", want, args)
				}
			}
			if img := o.Spec.Template.Spec.Containers[0].Image; img != TraefikImage {
				t.Errorf("image %s", img)
			}
		case *corev1.Service:
			if o.Spec.Type != corev1.ServiceTypeNodePort || o.Spec.Ports[0].TargetPort != intstr.FromString("web") || o.Spec.Ports[0].NodePort != 0 {
				t.Errorf("service %+v", o.Spec)
			}
		}
	}
	if len(p.Objects) != 5 {
		t.Errorf("objects: %v", kinds)
	}
	if p.Deployment == "" || p.Service == "" || p.Selector == "" || p.Container != "traefik" {
		t.Errorf("plan %+v", p)
	}

	objs := objects(t, manifests)
	for _, o := range objs {
		p.Rewrite(o)
	}
	shop := objs[2]
	if _, ok, _ := unstructured.NestedString(shop.Object, "spec", "ingressClassName"); ok {
		t.Error("the class name stays")
	}
	if _, ok, _ := unstructured.NestedSlice(shop.Object, "spec", "tls"); ok {
		t.Error("TLS stays")
	}
	if shop.GetAnnotations()[classAnnotation] != IngressClass {
		t.Errorf("annotations %v", shop.GetAnnotations())
	}
	if objs[3].GetAnnotations() != nil {
		t.Error("another Ingress was given the class")
	}
}

// run --via ingress names no Ingress: the only one in the manifests is taken, and several are a
// one-line error listing them.
func TestResolveIngressUnnamed(t *testing.T) {
	in := input(t, "", "/work")
	if _, err := Resolve(in); err == nil || !strings.Contains(err.Error(), "the manifests hold 4 Ingress objects (shop, wild, dangling, badport): name one") {
		t.Errorf("several: err = %v", err)
	}
	var one []*unstructured.Unstructured
	for _, o := range in.Objects {
		if o.GetKind() != "Ingress" || o.GetName() == "shop" {
			one = append(one, o)
		}
	}
	in.Objects = one
	if r, err := Resolve(in); err != nil || r.Ingress != "shop" || r.Host != "shop.example" {
		t.Errorf("the only one: %+v, %v", r, err)
	}
}
