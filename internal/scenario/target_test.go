package scenario

import (
	"strings"
	"testing"
)

func TestTargetBootstrapEnv(t *testing.T) {
	base := "name: web\nmanifests: [m.yaml]\nworkload: statefulset/web\nservice: web\n"
	spec, err := ParseTargetSpec("t.yaml", []byte(base+"bootstrapEnv: BOOTSTRAP_DURATION\n"))
	if err != nil {
		t.Fatal(err)
	}
	if spec.BootstrapEnv != "BOOTSTRAP_DURATION" || spec.Workload.Kind != "StatefulSet" {
		t.Errorf("bootstrapEnv %q, workload %+v", spec.BootstrapEnv, spec.Workload)
	}
	if _, err := ParseTargetSpec("t.yaml", []byte(base+"bootstrapEnv: \"not a name\"\n")); err == nil || !strings.Contains(err.Error(), "must be an environment variable name") {
		t.Errorf("a bad name: err = %v", err)
	}
}

func TestTargetProtocol(t *testing.T) {
	base := "name: web\nmanifests: [m.yaml]\nworkload: deployment/web\nservice: web\n"
	spec, err := ParseTargetSpec("t.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if spec.Protocol != LoadHTTP || spec.GRPC != nil {
		t.Errorf("default: protocol %q, grpc %+v", spec.Protocol, spec.GRPC)
	}
	spec, err = ParseTargetSpec("t.yaml", []byte(base+"port: grpc\nprotocol: grpc\n"))
	if err != nil {
		t.Fatal(err)
	}
	if spec.Protocol != LoadGRPC || spec.GRPC == nil || spec.GRPC.Method != GRPCHealthCheck || spec.Port != "grpc" {
		t.Errorf("grpc without a call: protocol %q, port %q, grpc %+v", spec.Protocol, spec.Port, spec.GRPC)
	}
	spec, err = ParseTargetSpec("t.yaml", []byte(base+"protocol: grpc\ngrpc: {method: /shop.v1.Cart/Get, request: '{\"id\": 7}'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (GRPCCall{Method: "/shop.v1.Cart/Get", Request: `{"id": 7}`}); *spec.GRPC != want {
		t.Errorf("grpc %+v, want %+v", *spec.GRPC, want)
	}
	spec, err = ParseTargetSpec("t.yaml", []byte(base+"protocol: grpc\ngrpc: {service: podinfo}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (GRPCCall{Method: GRPCHealthCheck, Service: "podinfo"}); *spec.GRPC != want {
		t.Errorf("grpc %+v, want %+v", *spec.GRPC, want)
	}
}

func TestTargetProtocolErrors(t *testing.T) {
	base := "name: web\nmanifests: [m.yaml]\nworkload: deployment/web\nservice: web\n"
	cases := map[string]struct{ body, want string }{
		"unknown protocol":       {"protocol: h2\n", `t.yaml:5: protocol: want http or grpc, got "h2"`},
		"method without package": {"protocol: grpc\ngrpc: {method: /Svc/Call}\n", `t.yaml:6: grpc.method: want /package.Service/Method, got "/Svc/Call"`},
		"method without slash":   {"protocol: grpc\ngrpc: {method: shop.Cart.Get}\n", `t.yaml:6: grpc.method: want /package.Service/Method, got "shop.Cart.Get"`},
		"method with a path":     {"protocol: grpc\ngrpc: {method: /shop.Cart/Get/x}\n", `grpc.method: want /package.Service/Method`},
		"request not JSON":       {"protocol: grpc\ngrpc: {method: /shop.Cart/Get, request: '{id: 7'}\n", `t.yaml:6: grpc.request: not JSON`},
		"request not a string":   {"protocol: grpc\ngrpc: {method: /shop.Cart/Get, request: {id: 7}}\n", `t.yaml:6: grpc.request: expected a string`},
		"unknown grpc field":     {"protocol: grpc\ngrpc: {metod: /shop.Cart/Get}\n", `grpc.metod: unknown field`},
		"grpc with http":         {"grpc: {method: /shop.Cart/Get}\n", `t.yaml:5: grpc: goes with protocol: grpc`},
		"requests with grpc":     {"protocol: grpc\nrequests: {default: /x}\n", `t.yaml:6: requests: HTTP paths`},
		"service with a method":  {"protocol: grpc\ngrpc: {method: /shop.Cart/Get, service: x}\n", `grpc.service: names the service the health check asks about`},
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

// A workload kind probegate does not test is refused with the reason, not a bare "want".
func TestTargetUntestedKinds(t *testing.T) {
	for workload, want := range map[string]string{
		"daemonset/agent": "daemonset/agent: probegate cannot test this kind: a DaemonSet runs one pod per eligible node",
		"ds/agent":        "a DaemonSet runs one pod per eligible node",
		"job/migrate":     "a Job's pods run to completion",
		"replicaset/web":  "name the Deployment that owns it",
		"pod/web":         `want deployment/NAME or statefulset/NAME, got "pod/web"`,
		"deployment":      `want deployment/NAME or statefulset/NAME, got "deployment"`,
	} {
		_, err := ParseTargetSpec("t.yaml", []byte("name: web\nmanifests: [m.yaml]\nworkload: "+workload+"\nservice: web\n"))
		if err == nil || !strings.Contains(err.Error(), "t.yaml:3: workload: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", workload, err, want)
		}
	}
}
