package lint

import "testing"

// TestReadinessWindowNeedsTraffic: a long readiness window matters only where readiness steers
// traffic. When the inventory shows the Services that select the workload and none routes user
// traffic to the container (a StatefulSet's headless peer Service, metrics ports), there is no
// finding; with no Service in view, lint cannot tell and still reports it.
func TestReadinessWindowNeedsTraffic(t *testing.T) {
	const container = "        image: db:1\n        ports: [{name: redis, containerPort: 6379}, {name: metrics, containerPort: 9121}]\n" +
		"        readinessProbe: {tcpSocket: {port: redis}, periodSeconds: 15, timeoutSeconds: 15, failureThreshold: 5}\n"
	cases := []struct {
		name, kind, rest string
		want             bool
	}{
		{"StatefulSet behind its headless peer Service only (redis-ha behind haproxy)", "StatefulSet", `---
apiVersion: v1
kind: Service
metadata: {name: db-peers}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{name: tcp-server, port: 6379, targetPort: redis}]
`, false},
		{"only a metrics Service selects it", "Deployment", `---
apiVersion: v1
kind: Service
metadata: {name: db-metrics}
spec:
  selector: {app: db}
  ports: [{name: metrics, port: 9121, targetPort: metrics}]
`, false},
		{"a Service routes clients to it", "StatefulSet", `---
apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  selector: {app: db}
  ports: [{name: tcp-server, port: 6379, targetPort: redis}]
`, true},
		{"no Service in view: cannot tell, reported", "Deployment", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := Parse("db.yaml", []byte(realManifest(tc.kind, "db", "3", "", container, tc.rest)))
			if err != nil {
				t.Fatal(err)
			}
			got := len(only(Lint(inv, Config{}), "PG007")) > 0
			if got != tc.want {
				t.Errorf("PG007 reported = %v, want %v", got, tc.want)
			}
		})
	}
}
