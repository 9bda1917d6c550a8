package scenario

import (
	"strings"
	"testing"
)

func TestTargetFrontDoor(t *testing.T) {
	base := "name: web\nmanifests: [m.yaml]\nworkload: deployment/web\nservice: web\n"
	spec, err := ParseTargetSpec("t.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if spec.FrontDoor != nil || spec.DoorKind() != FrontDoorKubeProxy {
		t.Errorf("default: frontDoor %+v, kind %q", spec.FrontDoor, spec.DoorKind())
	}
	spec, err = ParseTargetSpec("t.yaml", []byte(base+"frontDoor: {kind: ingress, ingress: web}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (FrontDoor{Kind: FrontDoorIngress, Ingress: "web"}); *spec.FrontDoor != want || spec.DoorKind() != FrontDoorIngress {
		t.Errorf("frontDoor %+v, want %+v", *spec.FrontDoor, want)
	}
	spec, err = ParseTargetSpec("t.yaml", []byte(base+"frontDoor: {kind: gateway, httpRoute: web}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (FrontDoor{Kind: FrontDoorGateway, HTTPRoute: "web"}); *spec.FrontDoor != want || spec.DoorKind() != FrontDoorGateway {
		t.Errorf("frontDoor %+v, want %+v", *spec.FrontDoor, want)
	}
	if spec, err = ParseTargetSpec("t.yaml", []byte(base+"frontDoor: {kind: kube-proxy}\n")); err != nil || spec.DoorKind() != FrontDoorKubeProxy {
		t.Errorf("kube-proxy named: %v, %v", spec, err)
	}
}

func TestTargetFrontDoorErrors(t *testing.T) {
	base := "name: web\nmanifests: [m.yaml]\nworkload: deployment/web\nservice: web\n"
	cases := map[string]struct{ body, want string }{
		"unknown kind":            {"frontDoor: {kind: mesh}\n", `t.yaml:5: frontDoor.kind: want kube-proxy, ingress or gateway, got "mesh"`},
		"no kind":                 {"frontDoor: {ingress: web}\n", `frontDoor.kind`},
		"ingress without a name":  {"frontDoor: {kind: ingress}\n", `t.yaml:5: frontDoor.ingress: required with kind: ingress`},
		"name without ingress":    {"frontDoor: {kind: kube-proxy, ingress: web}\n", `t.yaml:5: frontDoor.ingress: goes with kind: ingress`},
		"empty name":              {"frontDoor: {kind: ingress, ingress: ''}\n", `frontDoor.ingress: empty`},
		"grpc through ingress":    {"protocol: grpc\nfrontDoor: {kind: ingress, ingress: web}\n", `t.yaml:6: frontDoor: kind: ingress carries HTTP load only`},
		"unknown field":           {"frontDoor: {kind: ingress, ingress: web, class: x}\n", `frontDoor.class: unknown field`},
		"gateway without a route": {"frontDoor: {kind: gateway}\n", `t.yaml:5: frontDoor.httpRoute: required with kind: gateway: name the HTTPRoute`},
		"route with ingress":      {"frontDoor: {kind: ingress, ingress: web, httpRoute: web}\n", `t.yaml:5: frontDoor.httpRoute: goes with kind: gateway (the load goes through ingress)`},
		"ingress with gateway":    {"frontDoor: {kind: gateway, httpRoute: web, ingress: web}\n", `t.yaml:5: frontDoor.ingress: goes with kind: ingress (the load goes through gateway)`},
		"route with kube-proxy":   {"frontDoor: {kind: kube-proxy, httpRoute: web}\n", `frontDoor.httpRoute: goes with kind: gateway`},
		"empty route":             {"frontDoor: {kind: gateway, httpRoute: ''}\n", `frontDoor.httpRoute: empty`},
		"grpc through gateway":    {"protocol: grpc\nfrontDoor: {kind: gateway, httpRoute: web}\n", `t.yaml:6: frontDoor: kind: gateway carries HTTP load only`},
		"gateway unknown field":   {"frontDoor: {kind: gateway, httpRoute: web, gateway: x}\n", `frontDoor.gateway: unknown field`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseTargetSpec("t.yaml", []byte(base+tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestParseVia(t *testing.T) {
	good := map[string]FrontDoor{
		"kube-proxy":     {Kind: FrontDoorKubeProxy},
		"ingress":        {Kind: FrontDoorIngress},
		"ingress=shop":   {Kind: FrontDoorIngress, Ingress: "shop"},
		"gateway=target": {Kind: FrontDoorGateway, HTTPRoute: "target"},
	}
	for s, want := range good {
		if got, err := ParseVia(s); err != nil || *got != want {
			t.Errorf("ParseVia(%q) = %+v, %v; want %+v", s, got, err, want)
		}
	}
	for s, want := range map[string]string{
		"nginx":        `want kube-proxy, ingress[=INGRESS] or gateway[=HTTPROUTE]`,
		"ingress=":     "name the object after =",
		"kube-proxy=x": "kube-proxy names no object",
	} {
		if _, err := ParseVia(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseVia(%q) err = %v, want %q", s, err, want)
		}
	}
}
