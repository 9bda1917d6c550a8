package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedCheckApp is a Deployment whose liveness and readiness run the same check on its http port
// and which has no preStop hook: PG001 and PG009 when something routes to it.
var sharedCheckApp = realManifest("Deployment", "web", "3", "", `        image: app:1
        ports: [{name: http, containerPort: 8080}, {name: metrics, containerPort: 9090}]
        readinessProbe: {httpGet: {path: /healthz, port: http}}
        livenessProbe: {httpGet: {path: /healthz, port: http}}
`, "")

// TestNoServiceInView: a workload linted without its Services is judged as if one routed to its
// traffic ports, and each such finding says no Service was in view; a Service in view still decides.
func TestNoServiceInView(t *testing.T) {
	const note = "no Service was in view"
	for _, tc := range []struct {
		name, in   string
		want       map[string]Severity // rule → severity; rules not named must not fire at warning or above
		wantNote   bool
		noFindings []string
	}{
		{"alone: judged as served, with the note", sharedCheckApp,
			map[string]Severity{"PG001": Error, "PG009": Warning}, true, nil},
		{"its Service in view: the same findings, no note", sharedCheckApp + svcHTTP,
			map[string]Severity{"PG001": Error, "PG009": Warning}, false, nil},
		{"only a headless Service in view: info, as before", sharedCheckApp + strings.Replace(svcHTTP, "spec:\n", "spec:\n  clusterIP: None\n", 1),
			map[string]Severity{"PG001": Error, "PG009": Info}, false, nil},
		{"a Service in view routes to metrics only: no traffic findings", sharedCheckApp + `---
apiVersion: v1
kind: Service
metadata: {name: web-metrics}
spec:
  selector: {app: web}
  ports: [{name: metrics, port: 9090, targetPort: metrics}]
`, nil, false, []string{"PG001", "PG009"}},
		{"alone, only metrics and health ports: nothing assumed", realManifest("Deployment", "ctl", "2", "", `        image: ctl:1
        ports: [{name: metrics, containerPort: 8080}, {name: healthz, containerPort: 8081}]
        readinessProbe: {httpGet: {path: /healthz, port: healthz}}
        livenessProbe: {httpGet: {path: /healthz, port: healthz}}
`, ""), nil, false, []string{"PG001", "PG009", "PG014"}},
		{"alone, a StatefulSet: reached through its headless peer Service", strings.Replace(sharedCheckApp, "kind: Deployment", "kind: StatefulSet", 1),
			nil, false, []string{"PG001", "PG009", "PG007"}},
		{"alone, an unnamed redis port: long-lived connections", realManifest("Deployment", "cache", "2", "", `        image: redis:7
        ports: [{containerPort: 6379}]
`, ""), map[string]Severity{"PG009": Info, "PG014": Warning}, true, nil},
		{"alone, a controller's unprobed http port: metrics, nothing assumed", realManifest("Deployment", "queue-operator", "1", "", `        image: op:1
        args: [--leader-elect]
        ports: [{name: http, containerPort: 8080}]
        readinessProbe: {httpGet: {path: /readyz, port: 8081}}
        livenessProbe: {httpGet: {path: /healthz, port: 8081}}
`, ""), nil, false, []string{"PG002", "PG009", "PG014"}},
		{"alone, a controller with no probes and an https port: nothing assumed", realManifest("Deployment", "report-controller", "1", "", `        image: ctl:1
        ports: [{name: https, containerPort: 9443}, {name: metrics, containerPort: 8000}]
`, ""), nil, false, []string{"PG009", "PG014"}},
		{"alone, a controller's webhook port serves", realManifest("Deployment", "app-controller", "1", "", `        image: ctl:1
        ports: [{name: webhook, containerPort: 7000}, {name: metrics, containerPort: 8080}]
`, ""), map[string]Severity{"PG009": Warning, "PG014": Warning}, true, nil},
		{"alone, a controller's probed port serves", realManifest("Deployment", "cleanup-controller", "1", "", `        image: ctl:1
        ports: [{name: https, containerPort: 9443}]
        readinessProbe: {httpGet: {path: /health/readiness, port: 9443, scheme: HTTPS}}
`, ""), map[string]Severity{"PG009": Warning}, true, nil},
		{"alone, an admission controller's unnamed port serves", realManifest("Deployment", "admission-controller", "1", "", `        image: ctl:1
        ports: [{containerPort: 8000}, {name: prometheus, containerPort: 8944}]
`, ""), map[string]Severity{"PG009": Warning, "PG014": Warning}, true, nil},
		{"alone, an ingress controller serves its http port", realManifest("Deployment", "ingress-controller", "2", "", `        image: ctl:1
        ports: [{name: http, containerPort: 80}]
        readinessProbe: {httpGet: {path: /healthz, port: 10254}}
`, ""), map[string]Severity{"PG009": Warning}, true, nil},
		{"alone, no declared port but a readiness probe on one: served on a port it does not declare", realManifest("Deployment", "tracer", "1", "", `        image: tracer:1
        readinessProbe: {httpGet: {path: /status, port: 13133}}
        livenessProbe: {httpGet: {path: /status, port: 13133}}
`, ""), map[string]Severity{"PG001": Error, "PG009": Warning}, true, nil},
		{"alone, a controller with no declared port and a readiness probe: nothing assumed", realManifest("Deployment", "controller-manager", "1", "", `        image: ctl:1
        readinessProbe: {httpGet: {path: /readyz, port: 8081}}
        livenessProbe: {httpGet: {path: /healthz, port: 8081}}
`, ""), nil, false, []string{"PG002", "PG009"}},
		{"alone, a controller with a long readiness window: readiness steers no traffic", realManifest("Deployment", "node-controller", "1", "", `        image: ctl:1
        readinessProbe: {httpGet: {path: /healthz, port: 10247}, periodSeconds: 20, failureThreshold: 5}
`, ""), nil, false, []string{"PG007"}},
		{"alone, no declared port and an exec readiness probe: nothing assumed", realManifest("Deployment", "agent", "1", "", `        image: agent:1
        readinessProbe: {exec: {command: [/bin/ready]}}
`, ""), nil, false, []string{"PG009"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := Parse("app.yaml", []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			fs := Lint(inv, Config{})
			for rule, sev := range tc.want {
				got := only(fs, rule)
				if len(got) != 1 || got[0].Severity != sev {
					t.Fatalf("%s: want one %s finding, got %+v", rule, sev, got)
				}
				if has := strings.Contains(got[0].Message, note); has != tc.wantNote {
					t.Errorf("%s: note %q present = %v, want %v: %s", rule, note, has, tc.wantNote, got[0].Message)
				}
			}
			for _, rule := range tc.noFindings {
				if got := only(fs, rule); len(got) != 0 {
					t.Errorf("%s: want no finding, got %+v", rule, got)
				}
			}
		})
	}
}

// TestRoutingServices: --services reads Services from elsewhere for routing: a workload they show to
// be scrape-only loses its assumed findings, and the Services themselves are neither linted (no
// PG013 on them) nor counted.
func TestRoutingServices(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app.yaml")
	svcs := filepath.Join(dir, "services")
	if err := os.Mkdir(svcs, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(app, sharedCheckApp)
	write(filepath.Join(svcs, "svc.yaml"), strings.Replace(svcHTTP, "spec:\n", "spec:\n  publishNotReadyAddresses: true\n", 1))

	inv, err := LoadPaths([]string{app}, nil)
	if err != nil {
		t.Fatal(err)
	}
	AddRoutingServices(inv, []string{svcs})
	rep := NewReport(inv, Config{}, Warning)
	if rep.Services != 0 || len(inv.RoutingServices) != 1 {
		t.Errorf("services counted %d, routing %d; want 0 and 1", rep.Services, len(inv.RoutingServices))
	}
	if got := only(rep.Findings, "PG013"); len(got) != 0 {
		t.Errorf("a --services Service was linted: %+v", got)
	}
	p1 := only(rep.Findings, "PG001")
	if len(p1) != 1 || strings.Contains(p1[0].Message, "no Service was in view") {
		t.Errorf("PG001 with the Service read from --services: want one finding without the note, got %+v", p1)
	}

	AddRoutingServices(inv, []string{filepath.Join(dir, "missing")})
	if len(inv.Problems) != 1 || !strings.Contains(inv.Problems[0].Error(), "missing") {
		t.Errorf("an unreadable --services path is not a problem: %v", inv.Problems)
	}
}

// TestNoServiceUndeclaredPort: a container that declares no port but has a readiness probe on one is
// judged, alone, as served on a port it does not declare, and the finding says so.
func TestNoServiceUndeclaredPort(t *testing.T) {
	inv, err := Parse("app.yaml", []byte(realManifest("Deployment", "tracer", "1", "", `        image: tracer:1
        readinessProbe: {tcpSocket: {port: 13133}}
`, "")))
	if err != nil {
		t.Fatal(err)
	}
	got := only(Lint(inv, Config{}), "PG009")
	const want = "a Service to a port it does not declare (none in view; its readiness probe checks port 13133) routes to it"
	if len(got) != 1 || !strings.Contains(got[0].Message, want) {
		t.Errorf("PG009: want one finding saying %q, got %+v", want, got)
	}
}
