package lint

import (
	"strings"
	"testing"
)

// TestWithdrawalDelayByProtocol: PG009 is a warning for the request protocols it is about (HTTP,
// gRPC, and any port whose protocol the manifest does not say) and info when every route to the
// container carries a protocol of long-lived connections (redis, websockets, databases, brokers),
// named by the Service port's appProtocol or name, or by the container port it targets. Those
// connections are dropped at SIGTERM with or without a delay and re-established by their clients; a
// withdrawal delay only spares the few new connections of the propagation window.
func TestWithdrawalDelayByProtocol(t *testing.T) {
	svc := func(ports string) string {
		return "---\napiVersion: v1\nkind: Service\nmetadata: {name: app}\nspec:\n  selector: {app: app}\n  ports: " + ports + "\n"
	}
	cases := []struct {
		name, containerPorts, servicePorts string
		want                               Severity
		says                               string
	}{
		{"Service port named for redis by the mesh convention, numeric target (argocd-redis)",
			"[{containerPort: 6379}]", "[{name: tcp-redis, port: 6379, targetPort: 6379}]", Info, "redis"},
		{"target container port named redis behind a proxy's tcp port (redis-ha haproxy)",
			"[{name: redis, containerPort: 6379}]", "[{name: tcp-haproxy, port: 6379, targetPort: redis}]", Info, "redis"},
		{"container port named websocket behind a Service port named http (knative autoscaler)",
			"[{name: websocket, containerPort: 8080}]", "[{name: http, port: 8080, targetPort: 8080}]", Info, "websocket"},
		{"appProtocol kubernetes.io/ws",
			"[{name: api, containerPort: 8080}]", "[{name: api, port: 80, targetPort: api, appProtocol: kubernetes.io/ws}]", Info, "ws"},
		{"appProtocol decides over a name: postgresql on a port named web",
			"[{name: web, containerPort: 5432}]", "[{name: web, port: 5432, targetPort: web, appProtocol: postgresql}]", Info, "postgresql"},
		{"appProtocol http decides over a container port named redis",
			"[{name: redis, containerPort: 8080}]", "[{name: api, port: 80, targetPort: redis, appProtocol: http}]", Warning, "may stop serving"},
		{"HTTP", "[{name: http, containerPort: 8080}]", "[{name: http, port: 80, targetPort: http}]", Warning, "may stop serving"},
		{"gRPC: RPCs sent while the client reconnects fail on a refused connection",
			"[{name: grpc, containerPort: 9000}]", "[{name: grpc, port: 9000, targetPort: grpc}]", Warning, "may stop serving"},
		{"one HTTP route among redis routes keeps the warning, and names the HTTP route",
			"[{name: redis, containerPort: 6379}, {name: http, containerPort: 8080}]",
			"[{name: tcp-redis, port: 6379, targetPort: redis}, {name: http, port: 80, targetPort: http}]", Warning, "port http routes"},
		{"a protocol the manifest does not name stays a warning (a custom name, plain tcp)",
			"[{name: server, containerPort: 5473}]", "[{name: server, port: 5473, targetPort: server}, {name: tcp, port: 5474, targetPort: 5473}]", Warning, "may stop serving"},
		{"appProtocol TCP says nothing about connection lifetime",
			"[{containerPort: 5556}]", "[{name: http, port: 5556, targetPort: 5556, appProtocol: TCP}]", Warning, "may stop serving"},
		{"a name that merely contains a protocol's letters is not that protocol",
			"[{name: news, containerPort: 8080}]", "[{name: aws-api, port: 80, targetPort: news}]", Warning, "may stop serving"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			container := "        image: app:1\n        ports: " + tc.containerPorts + "\n" +
				"        readinessProbe: {tcpSocket: {port: 9999}, periodSeconds: 5}\n"
			inv, err := Parse("app.yaml", []byte(realManifest("Deployment", "app", "3", "", container, svc(tc.servicePorts))))
			if err != nil {
				t.Fatal(err)
			}
			fs := only(Lint(inv, Config{}), "PG009")
			if len(fs) != 1 {
				t.Fatalf("want one PG009 finding, got %d: %+v", len(fs), fs)
			}
			if fs[0].Severity != tc.want || !strings.Contains(fs[0].Message, tc.says) {
				t.Errorf("got %s %q; want %s saying %q", fs[0].Severity, fs[0].Message, tc.want, tc.says)
			}
		})
	}
}

// TestWithdrawalDelayInAppDrain: a grace period above a minute on a container with no preStop hook
// can only be spent by the process itself, so the application drains in-process after SIGTERM
// (knative's activator at 600 s, calico-typha at 300 s): PG009 is info and says so with the
// manifest's grace period. The API default and a minute stay warnings.
func TestWithdrawalDelayInAppDrain(t *testing.T) {
	cases := []struct {
		grace string
		want  Severity
		says  string
	}{
		{"", Warning, "may stop serving"},
		{"      terminationGracePeriodSeconds: 60\n", Warning, "may stop serving"},
		{"      terminationGracePeriodSeconds: 300\n", Info, "terminationGracePeriodSeconds is 300, above a minute, and only the process can spend it"},
	}
	for _, tc := range cases {
		container := "        image: app:1\n        ports: [{name: http, containerPort: 8080}]\n" +
			"        readinessProbe: {httpGet: {path: /ready, port: http}, periodSeconds: 5}\n"
		inv, err := Parse("app.yaml", []byte(realManifest("Deployment", "web", "3", tc.grace, container, svcHTTP)))
		if err != nil {
			t.Fatal(err)
		}
		fs := only(Lint(inv, Config{}), "PG009")
		if len(fs) != 1 {
			t.Fatalf("grace %q: want one PG009 finding, got %+v", tc.grace, fs)
		}
		if fs[0].Severity != tc.want || !strings.Contains(fs[0].Message, tc.says) {
			t.Errorf("grace %q: got %s %q; want %s saying %q", tc.grace, fs[0].Severity, fs[0].Message, tc.want, tc.says)
		}
		if !strings.Contains(fs[0].Fix, "preStop: {sleep: {seconds: 5}}") {
			t.Errorf("grace %q: fix %q does not state the preStop sleep", tc.grace, fs[0].Fix)
		}
	}
}
