package lint

import (
	"strings"
	"testing"
	"time"
)

// TestInitialDelaySeverity: PG003 is a warning only when the manifest shows the guessed bootstrap
// budget at risk, and info when the delay reads as grace (the fast-starting controllers of the
// real-world corpus: a separate /healthz beside /readyz, no state, a budget of a minute).
func TestInitialDelaySeverity(t *testing.T) {
	const probes = "        readinessProbe: {httpGet: {path: /readyz, port: 8081}, periodSeconds: 10}\n"
	cases := []struct {
		name, podExtra, container string
		kind                      string
		want                      Severity
		says                      string
	}{
		{"separate liveness, no state, a minute's budget: grace (controller-runtime managers)", "",
			probes + "        livenessProbe: {httpGet: {path: /healthz, port: 8081}, initialDelaySeconds: 15, periodSeconds: 20}\n",
			"Deployment", Info, "reads as grace"},
		{"separate exec liveness, no state: grace (check-status -l beside -r)", "",
			"        readinessProbe: {exec: {command: [check-status, -r]}}\n        livenessProbe: {exec: {command: [check-status, -l]}, initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 6}\n",
			"Deployment", Info, "reads as grace"},
		{"scratch emptyDirs are no state (/tmp, plugin directories)",
			"      volumes: [{name: tmp, emptyDir: {}}, {name: plugins, emptyDir: {}}]\n",
			probes + "        livenessProbe: {httpGet: {path: /healthz, port: 8081}, initialDelaySeconds: 30, periodSeconds: 30}\n        volumeMounts: [{name: tmp, mountPath: /tmp}, {name: plugins, mountPath: /home/app/plugin-bin}]\n",
			"Deployment", Info, "reads as grace"},
		{"liveness runs readiness's check: it fails for the whole bootstrap (ingress controllers; only the metrics port declared, so no PG001)", "",
			"        ports: [{name: metrics, containerPort: 10254}]\n        readinessProbe: {httpGet: {path: /healthz, port: 10254}}\n        livenessProbe: {httpGet: {path: /healthz, port: 10254}, initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 5}\n",
			"Deployment", Warning, "runs readiness's check"},
		{"data on an emptyDir at /data, liveness a check of its own: a new pod loads nothing (Prometheus's /-/healthy beside /-/ready)",
			"      volumes: [{name: storage, emptyDir: {}}]\n",
			probes + "        livenessProbe: {httpGet: {path: /healthz, port: 8081}, initialDelaySeconds: 30, periodSeconds: 15}\n        volumeMounts: [{name: storage, mountPath: /data}]\n",
			"Deployment", Info, `its only state is on emptyDir "storage" at /data`},
		{"data on an emptyDir and liveness runs readiness's check: a restart in place fails it until the load ends (grafana)",
			"      volumes: [{name: storage, emptyDir: {}}]\n",
			"        readinessProbe: {httpGet: {path: /api/health, port: 3000}}\n        livenessProbe: {httpGet: {path: /api/health, port: 3000}, initialDelaySeconds: 60, failureThreshold: 10}\n        volumeMounts: [{name: storage, mountPath: /var/lib/grafana}]\n",
			"Deployment", Warning, `state on emptyDir "storage" at /var/lib/grafana, which a restart in place loads`},
		{"data on an emptyDir, both probes run a check named for liveness: readiness borrows it (argo-cd's redis-ha sentinel)",
			"      volumes: [{name: data, emptyDir: {}}]\n",
			"        readinessProbe: {exec: {command: [sh, -c, /health/sentinel_liveness.sh]}, failureThreshold: 5}\n        livenessProbe: {exec: {command: [sh, -c, /health/sentinel_liveness.sh]}, initialDelaySeconds: 30, periodSeconds: 15, failureThreshold: 5}\n        volumeMounts: [{name: data, mountPath: /data}]\n",
			"Deployment", Info, "readiness borrows liveness's check"},
		{"a shared check whose name merely contains the letters (/delivery/status) is readiness's",
			"      volumes: [{name: data, emptyDir: {}}]\n",
			"        readinessProbe: {httpGet: {path: /delivery/status, port: 8080}}\n        livenessProbe: {httpGet: {path: /delivery/status, port: 8080}, initialDelaySeconds: 30, periodSeconds: 15, failureThreshold: 5}\n        volumeMounts: [{name: data, mountPath: /data}]\n",
			"Deployment", Warning, "liveness runs readiness's check"},
		{"data on a claim, liveness a check of its own: every start loads it",
			"      volumes: [{name: storage, persistentVolumeClaim: {claimName: tsdb}}]\n",
			probes + "        livenessProbe: {httpGet: {path: /healthz, port: 8081}, initialDelaySeconds: 30, periodSeconds: 15}\n        volumeMounts: [{name: storage, mountPath: /data}]\n",
			"Deployment", Warning, `volume "storage" at /data`},
		{"state in a hostPath under /var/lib (node agents)",
			"      volumes: [{name: state, hostPath: {path: /var/lib/agent}}]\n",
			probes + "        livenessProbe: {httpGet: {path: /healthz, port: 8081}, initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 6}\n        volumeMounts: [{name: state, mountPath: /var/lib/agent}]\n",
			"Deployment", Warning, "/var/lib/agent"},
		{"a StatefulSet's claim template", "",
			probes + "        livenessProbe: {httpGet: {path: /healthz, port: 8081}, initialDelaySeconds: 30, periodSeconds: 15}\n        volumeMounts: [{name: pgdata, mountPath: /var/lib/postgresql}]\n",
			"StatefulSet", Warning, `volume "pgdata"`},
		{"a read-only data mount is no state the container writes",
			"      volumes: [{name: storage, emptyDir: {}}]\n",
			probes + "        livenessProbe: {httpGet: {path: /healthz, port: 8081}, initialDelaySeconds: 30, periodSeconds: 15}\n        volumeMounts: [{name: storage, mountPath: /data, readOnly: true}]\n",
			"Deployment", Info, "reads as grace"},
		{"a budget under 30 s: any slow dependency overruns it (the no-startup-probe fixture)", "",
			probes + "        livenessProbe: {httpGet: {path: /health/live, port: 8081}, initialDelaySeconds: 10, periodSeconds: 5}\n",
			"Deployment", Warning, "budget under 30 s"},
		{"no readiness probe: liveness alone bounds the start", "",
			"        livenessProbe: {httpGet: {path: /healthz, port: 8081}, initialDelaySeconds: 30, periodSeconds: 30}\n",
			"Deployment", Warning, "no readiness probe"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := realManifest(tc.kind, "app", "3", tc.podExtra, "        image: app:1\n"+tc.container, "")
			inv, err := Parse("app.yaml", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			fs := only(Lint(inv, Config{}), "PG003")
			if len(fs) != 1 {
				t.Fatalf("want one PG003 finding, got %d: %+v", len(fs), fs)
			}
			if fs[0].Severity != tc.want || !strings.Contains(fs[0].Message, tc.says) {
				t.Errorf("got %s %q; want %s saying %q", fs[0].Severity, fs[0].Message, tc.want, tc.says)
			}
		})
	}
}

// TestInitialDelayMeasuredColdStart: a measured cold start settles what the manifest cannot show. A
// budget that covers it with margin is no guess (info); a budget below it is PG004's finding, and
// PG003 does not restate it.
func TestInitialDelayMeasuredColdStart(t *testing.T) {
	// Liveness runs readiness's check: a warning without a measurement. Budget 10 + 4·10 = 50 s. Only
	// a metrics port is declared, so nothing is assumed to route to it and PG001 stays silent.
	const container = "        ports: [{name: metrics, containerPort: 10254}]\n" +
		"        readinessProbe: {httpGet: {path: /healthz, port: 10254}}\n" +
		"        livenessProbe: {httpGet: {path: /healthz, port: 10254}, initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 5}\n"
	for _, tc := range []struct {
		name    string
		cold    string // annotation value; "" for none
		flag    time.Duration
		pg003   Severity // SeverityNone: no PG003 finding
		pg004   bool
		message string
	}{
		{"no measurement: the manifest's risk decides", "", 0, Warning, false, "runs readiness's check"},
		{"annotation 20s: covered with margin", "20", 0, Info, false, "measured cold start 20s (annotation probegate.dev/cold-start-seconds)"},
		{"--cold-start 30s: covered with margin", "", 30 * time.Second, Info, false, "measured cold start 30s (--cold-start)"},
		{"annotation 45s: covered without margin, the risk stays", "45", 0, Warning, false, "runs readiness's check"},
		{"annotation 90s: PG004's finding, not restated", "90", 0, SeverityNone, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := realManifest("Deployment", "app", "3", "", "        image: app:1\n"+container, "")
			if tc.cold != "" {
				in = strings.Replace(in, "metadata: {name: app}", "metadata: {name: app, annotations: {"+AnnotationColdStart+": \""+tc.cold+"\"}}", 1)
			}
			inv, err := Parse("app.yaml", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			fs := Lint(inv, Config{ColdStart: tc.flag})
			pg003, pg004 := only(fs, "PG003"), only(fs, "PG004")
			if (len(pg004) > 0) != tc.pg004 {
				t.Errorf("PG004 findings %+v, want %v", pg004, tc.pg004)
			}
			if tc.pg003 == SeverityNone {
				if len(pg003) != 0 {
					t.Errorf("PG003 restates PG004: %+v", pg003)
				}
				return
			}
			if len(pg003) != 1 || pg003[0].Severity != tc.pg003 || !strings.Contains(pg003[0].Message, tc.message) {
				t.Errorf("PG003 %+v; want one %s saying %q", pg003, tc.pg003, tc.message)
			}
		})
	}
}

// TestInitialDelayFoldsIntoIdenticalProbes: when liveness runs readiness's check and a Service
// routes to the container, PG001 reports the root cause (its finding states the bootstrap
// consequence) and PG003 drops to info pointing at it: one finding per root cause. With no Service
// in view the container is judged as routed, the same. When the Services in view route elsewhere,
// PG001 is silent and PG003 stays a warning.
func TestInitialDelayFoldsIntoIdenticalProbes(t *testing.T) {
	const container = "        ports: [{name: http, containerPort: 10254}]\n" +
		"        readinessProbe: {httpGet: {path: /healthz, port: 10254}}\n" +
		"        livenessProbe: {httpGet: {path: /healthz, port: 10254}, initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 5}\n"
	for _, tc := range []struct {
		name, rest string
		pg003      Severity
		pg001      bool
	}{
		{"routed: PG001 carries the root cause", svcHTTP, Info, true},
		{"no Service in view: judged as routed", "", Info, true},
		{"Services route elsewhere: PG003 alone says it", strings.ReplaceAll(svcHTTP, "app: web", "app: other"), Warning, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := realManifest("Deployment", "web", "3", "", "        image: app:1\n"+container, tc.rest)
			inv, err := Parse("app.yaml", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			fs := Lint(inv, Config{})
			p3 := only(fs, "PG003")
			if len(p3) != 1 || p3[0].Severity != tc.pg003 || !strings.Contains(p3[0].Message, "runs readiness's check") {
				t.Fatalf("PG003: want one %s finding naming the shared check, got %+v", tc.pg003, p3)
			}
			if tc.pg003 == Info && !strings.Contains(p3[0].Message, "PG001") {
				t.Errorf("PG003 info does not point at PG001: %q", p3[0].Message)
			}
			p1 := only(fs, "PG001")
			if !tc.pg001 {
				if len(p1) != 0 {
					t.Fatalf("PG001 without a route: %+v", p1)
				}
				return
			}
			if len(p1) != 1 || !strings.Contains(p1[0].Message, "initialDelay + (F−1)·P = 50s") {
				t.Fatalf("PG001: want one finding stating the 50s bootstrap budget, got %+v", p1)
			}
		})
	}
}
