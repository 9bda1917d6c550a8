package lint

import (
	"fmt"
	"strings"
	"testing"
)

// deployment renders a one-container Deployment (kind and extra pod-spec lines can vary) behind
// whatever Service YAML follows it.
func realManifest(kind, name, replicas, podExtra, container, rest string) string {
	return `apiVersion: apps/v1
kind: ` + kind + `
metadata: {name: ` + name + `}
spec:
  replicas: ` + replicas + `
  serviceName: ` + name + `-peers
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec:
` + podExtra + `      containers:
      - name: ` + name + `
` + container + rest
}

const svcHTTP = `---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
`

// TestRealWorldPatterns: one case per false positive and miss found on real install manifests;
// each names the rules that must and must not fire.
func TestRealWorldPatterns(t *testing.T) {
	cases := []struct {
		name, in    string
		want, never []string
	}{
		{"metrics-only Service: no drain or readiness rules (argo-rollouts, kyverno controllers)",
			realManifest("Deployment", "ctl", "1", "", "        image: ctl:1\n        ports: [{name: metrics, containerPort: 8090}]\n", `---
apiVersion: v1
kind: Service
metadata: {name: ctl-metrics}
spec:
  selector: {app: ctl}
  ports: [{name: metrics, port: 8090, targetPort: 8090}]
`), nil, []string{"PG009", "PG014"}},
		{"no Service at all: no drain or identical-probe rules (VPA recommender, KEDA operator)",
			realManifest("Deployment", "ctl", "1", "", "        image: ctl:1\n        ports: [{name: prometheus, containerPort: 8942}]\n        livenessProbe: {httpGet: {path: /health-check, port: 8942}, periodSeconds: 20}\n        readinessProbe: {httpGet: {path: /health-check, port: 8942}}\n", ""),
			nil, []string{"PG001", "PG002", "PG009", "PG011"}},
		{"single-replica StatefulSet with a headless peer Service publishing not-ready addresses (databases)",
			realManifest("StatefulSet", "db", "1", "", "        image: db:1\n        ports: [{name: sql, containerPort: 5432}]\n        readinessProbe: {tcpSocket: {port: sql}, periodSeconds: 5}\n", `---
apiVersion: v1
kind: Service
metadata: {name: db-peers}
spec:
  clusterIP: None
  publishNotReadyAddresses: true
  selector: {app: db}
  ports: [{name: sql, port: 5432, targetPort: sql}]
`), nil, []string{"PG009", "PG013", "PG014"}},
		{"numeric probe port nobody declares, shell in an ordinary image, default readiness timing (ingress controllers, redis-ha)",
			realManifest("Deployment", "web", "3", "", "        image: nginx:1.27\n        ports: [{name: http, containerPort: 80}]\n        lifecycle: {preStop: {exec: {command: [sh, -c, 'sleep 5']}}}\n        readinessProbe: {httpGet: {path: /healthz, port: 10254}}\n        livenessProbe: {exec: {command: [sh, -c, 'pgrep nginx']}, periodSeconds: 20, failureThreshold: 5}\n", svcHTTP),
			nil, []string{"PG007", "PG010", "PG011"}},
		{"probes identical but for an HTTP header (knative's activator pattern)",
			realManifest("Deployment", "web", "3", "", "        image: web:1\n        ports: [{name: http, containerPort: 8012}]\n        lifecycle: {preStop: {sleep: {seconds: 5}}}\n        readinessProbe: {httpGet: {path: /, port: http, httpHeaders: [{name: K-Probe, value: ready}]}}\n        livenessProbe: {httpGet: {path: /, port: http, httpHeaders: [{name: K-Probe, value: live}]}}\n", svcHTTP),
			[]string{"PG001"}, []string{"PG002"}},
		{"replica's liveness pings its primary through an exec client (redis, postgres replicas)",
			realManifest("Deployment", "web", "3", "", "        image: redis:7\n        ports: [{name: http, containerPort: 6379}]\n        lifecycle: {preStop: {sleep: {seconds: 5}}}\n        readinessProbe: {tcpSocket: {port: http}, periodSeconds: 5}\n        livenessProbe: {exec: {command: [sh, -c, 'redis-cli -h $PRIMARY_HOST ping']}, periodSeconds: 10, failureThreshold: 6, timeoutSeconds: 5}\n", svcHTTP),
			[]string{"PG005"}, nil},
		{"SQL client in a readiness probe with a 1 s timeout (database charts)",
			realManifest("Deployment", "web", "3", "", "        image: postgres:16\n        ports: [{name: http, containerPort: 5432}]\n        lifecycle: {preStop: {sleep: {seconds: 5}}}\n        readinessProbe: {exec: {command: [psql, -U, app, -c, 'SELECT 1']}, periodSeconds: 5}\n", svcHTTP),
			[]string{"PG006"}, nil},
		{"JVM with default liveness and no startup probe, no --cold-start",
			realManifest("Deployment", "web", "3", "", "        image: eclipse-temurin:21-jre\n        ports: [{name: http, containerPort: 8080}]\n        lifecycle: {preStop: {sleep: {seconds: 5}}}\n        readinessProbe: {httpGet: {path: /ready, port: http}, periodSeconds: 5}\n        livenessProbe: {httpGet: {path: /live, port: http}, periodSeconds: 10, failureThreshold: 3, initialDelaySeconds: 0}\n", svcHTTP),
			[]string{"PG004"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv, err := Parse("real.yaml", []byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			got := ruleSet(Lint(inv, Config{}))
			for _, id := range c.want {
				if !got[id] {
					t.Errorf("no %s finding; got %v", id, keys(got))
				}
			}
			for _, id := range c.never {
				if got[id] {
					t.Errorf("false positive %s; got %v", id, keys(got))
				}
			}
		})
	}
}

// TestSuppression: --disable, the config file's list and the ignore annotation keep the finding as
// suppressed (counted, never failing the run); an ignore naming no rule is itself a finding.
func TestSuppression(t *testing.T) {
	in := realManifest("Deployment", "web", "3", "", "        image: web:1\n        ports: [{name: http, containerPort: 8080}]\n", svcHTTP)
	in = strings.Replace(in, "metadata: {name: web}", "metadata: {name: web, annotations: {probegate.dev/ignore: \"PG014,no-such-rule: readiness is handled by the mesh\"}}", 1)
	inv, err := Parse("s.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	disable, err := ParseDisable([]string{"no-withdrawal-delay"})
	if err != nil {
		t.Fatal(err)
	}
	rep := NewReport(inv, Config{Disable: disable}, Warning)
	sup := map[string]string{}
	for _, f := range rep.Suppressed {
		sup[f.RuleID] = f.Suppressed.Kind + ":" + f.Suppressed.Reason
	}
	if sup["PG009"] != "flag:" || sup["PG014"] != "annotation:readiness is handled by the mesh" {
		t.Errorf("suppressed %v", sup)
	}
	active := ruleSet(rep.Findings)
	if active["PG009"] || active["PG014"] || !active["PG015"] {
		t.Errorf("active %v, want only PG015 (the unknown rule name)", keys(active))
	}
	if _, err := ParseDisable([]string{"PG999"}); err == nil {
		t.Error("ParseDisable accepted an unknown rule")
	}
}

// TestPlaceholderPortsAndStreams: a StatefulSet's governing Service with a port no container
// declares routes nowhere (csi-snapshotter's `dummy: 12345`), while the same port on any other
// Service still reaches the first container; and an xDS control plane (contour) is served over
// long-lived streams, so the drain and liveness-order rules are info there and warnings on HTTP.
func TestPlaceholderPortsAndStreams(t *testing.T) {
	svc := func(name, port string) string {
		return "---\napiVersion: v1\nkind: Service\nmetadata: {name: " + name + "}\nspec:\n  selector: {app: csi}\n  ports: [{name: " + port + ", port: 12345}]\n"
	}
	sidecars := "        image: provisioner:1\n      - name: snapshotter\n        image: snapshotter:1\n"
	const contour = "        image: contour:1\n        ports: [{name: %s, containerPort: 8001}, {name: metrics, containerPort: 8000}]\n" +
		"        livenessProbe: {httpGet: {path: /healthz, port: 8000}}\n        readinessProbe: {tcpSocket: {port: 8001}, periodSeconds: 10}\n"
	contourSvc := "---\napiVersion: v1\nkind: Service\nmetadata: {name: contour}\nspec:\n  selector: {app: contour}\n  ports: [{name: %s, port: 8001, targetPort: 8001}]\n"
	cases := []struct {
		name, in string
		want     map[string]Severity // rule → severity; -1 for "not reported"
	}{
		{"governing Service, placeholder port: routes nowhere",
			realManifest("StatefulSet", "csi", "3", "", sidecars, svc("csi-peers", "dummy")),
			map[string]Severity{"PG014": -1, "PG009": -1}},
		{"another Service, the same undeclared port: the first container",
			realManifest("StatefulSet", "csi", "3", "", sidecars, svc("csi-api", "api")),
			map[string]Severity{"PG014": Warning, "PG009": Warning}},
		{"xDS streams: drain and liveness order are info",
			realManifest("Deployment", "contour", "2", "", fmt.Sprintf(contour, "xds"), fmt.Sprintf(contourSvc, "xds")),
			map[string]Severity{"PG009": Info, "PG002": Info}},
		{"the same server on HTTP: warnings",
			realManifest("Deployment", "contour", "2", "", fmt.Sprintf(contour, "http"), fmt.Sprintf(contourSvc, "http")),
			map[string]Severity{"PG009": Warning, "PG002": Warning}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := Parse("real.yaml", []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			fs := Lint(inv, Config{})
			for id, want := range tc.want {
				got := only(fs, id)
				switch {
				case want < 0 && len(got) != 0:
					t.Errorf("%s reported: %s", id, got[0].Message)
				case want >= 0 && (len(got) != 1 || got[0].Severity != want):
					t.Errorf("%s: want one %s finding, got %+v", id, want, got)
				}
			}
		})
	}
}
