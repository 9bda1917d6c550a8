package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/frontdoor"
	"github.com/probegate/probegate/internal/scenario"
)

const shopIngress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop}
spec:
  ingressClassName: nginx
  rules:
  - host: shop.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}
      - {path: /db, pathType: Prefix, backend: {service: {name: db, port: {number: 5432}}}}
`

// ingressTarget writes the shop app with an Ingress and a target file going through it.
func ingressTarget(t *testing.T, extra string) *scenario.TargetSpec {
	t.Helper()
	spec := writeTarget(t, shopTarget+"frontDoor: {kind: ingress, ingress: shop}\n"+extra)
	if err := os.WriteFile(filepath.Join(filepath.Dir(spec.File), "ingress.yaml"), []byte(shopIngress), 0o644); err != nil {
		t.Fatal(err)
	}
	spec.Manifests = append(spec.Manifests, "ingress.yaml")
	return spec
}

func TestLoadAppResolvesTheFrontDoor(t *testing.T) {
	app, err := LoadApp(ingressTarget(t, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if app.Door != (frontdoor.Route{Kind: scenario.FrontDoorIngress, Ingress: "shop", Host: "shop.example"}) {
		t.Errorf("door %+v", app.Door)
	}
	if imgs := imagesToLoad(app); !slices.Contains(imgs, frontdoor.TraefikImage) || !slices.Contains(imgs, DefaultToxiproxyImage) {
		t.Errorf("images %v", imgs)
	}
	plain, err := LoadApp(writeTarget(t, shopTarget), nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Door.Kind != scenario.FrontDoorKubeProxy || slices.Contains(imagesToLoad(plain), frontdoor.TraefikImage) {
		t.Errorf("kube-proxy: door %+v, images %v", plain.Door, imagesToLoad(plain))
	}
}

func TestLoadAppRejectsABadFrontDoor(t *testing.T) {
	for name, tc := range map[string]struct{ extra, want string }{
		"path to another service": {"requests: {default: /db/x}\n", "target shop: ingress shop: routes /db/x to service db port 5432, not to the target's service web port http (80)"},
		"takes path too":          {"requests: {default: /, takes: \"/db/sleep/{seconds}\"}\n", "routes /db/sleep/1 to service db"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadApp(ingressTarget(t, tc.extra), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line with %q", err, tc.want)
			}
		})
	}
	spec := ingressTarget(t, "")
	spec.FrontDoor.Ingress = "shops"
	if _, err := LoadApp(spec, nil); err == nil || !strings.Contains(err.Error(), "target shop: frontDoor.ingress: no Ingress shops in the manifests (Ingresses: shop)") {
		t.Errorf("err = %v", err)
	}
}

const shopRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop}
spec:
  parentRefs: [{name: shared}]
  hostnames: [shop.example]
  rules:
  - backendRefs: [{name: web, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /db}}]
    backendRefs: [{name: db, port: 5432}]
`

// gatewayTarget writes the shop app with an HTTPRoute and a target file going through it.
func gatewayTarget(t *testing.T, extra string) *scenario.TargetSpec {
	t.Helper()
	spec := writeTarget(t, shopTarget+"frontDoor: {kind: gateway, httpRoute: shop}\n"+extra)
	if err := os.WriteFile(filepath.Join(filepath.Dir(spec.File), "route.yaml"), []byte(shopRoute), 0o644); err != nil {
		t.Fatal(err)
	}
	spec.Manifests = append(spec.Manifests, "route.yaml")
	return spec
}

func TestLoadAppResolvesTheGatewayDoor(t *testing.T) {
	app, err := LoadApp(gatewayTarget(t, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if app.Door != (frontdoor.Route{Kind: scenario.FrontDoorGateway, HTTPRoute: "shop", Host: "shop.example"}) {
		t.Errorf("door %+v", app.Door)
	}
	if imgs := imagesToLoad(app); !slices.Contains(imgs, frontdoor.TraefikImage) {
		t.Errorf("images %v", imgs)
	}
	_, err = LoadApp(gatewayTarget(t, "requests: {default: /db/x}\n"), nil)
	if want := "target shop: httproute shop: routes /db/x to service db port 5432, not to the target's service web port http (80)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}
