package lint

import (
	"strings"
	"testing"
)

// replicaWithScriptProbe is a cache replica whose liveness runs a script kept in a ConfigMap: the
// script pings the local server and, through a second script of the same ConfigMap, the primary.
const replicaWithScriptProbe = `apiVersion: apps/v1
kind: Deployment
metadata: {name: cache-replica}
spec:
  replicas: 3
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      containers:
      - name: cache
        image: cache:7
        ports: [{name: redis, containerPort: 6379}]
        readinessProbe: {exec: {command: [sh, -c, /health/ping_local.sh 1]}, timeoutSeconds: 2}
        livenessProbe: {exec: {command: [sh, -c, /health/ping_local_and_primary.sh 5]}, timeoutSeconds: 6}
        volumeMounts: [{name: health, mountPath: /health}]
      volumes:
      - name: health
        configMap: {name: cache-health, defaultMode: 0755}
`

const cacheHealthScripts = `---
apiVersion: v1
kind: ConfigMap
metadata: {name: cache-health}
data:
  ping_local.sh: |-
    #!/bin/bash
    # answers PONG when the local server is up
    response=$(timeout -s 15 $1 redis-cli -h localhost -p 6379 ping)
    [ "$response" = "PONG" ]
  ping_primary.sh: |-
    #!/bin/bash
    response=$(timeout -s 15 $1 redis-cli -h "$PRIMARY_HOST" -p "$PRIMARY_PORT" ping)
    [ "$response" = "PONG" ]
  ping_local_and_primary.sh: |-
    script_dir="$(dirname "$0")"
    "$script_dir/ping_local.sh" $1 || exit 1
    "$script_dir/ping_primary.sh" $1 || exit 1
`

// TestProbeScriptFromConfigMap: an exec probe that runs a file of a mounted ConfigMap is read as the
// script's text when the ConfigMap is in view, so a liveness that pings the primary is PG005; with
// the ConfigMap elsewhere lint cannot see what the script does and says nothing.
func TestProbeScriptFromConfigMap(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     bool
	}{
		{"ConfigMap in view", replicaWithScriptProbe + cacheHealthScripts, true},
		{"ConfigMap elsewhere", replicaWithScriptProbe, false},
		{"mounted by subPath, one file", strings.NewReplacer(
			"/health/ping_local_and_primary.sh", "/usr/local/bin/live.sh",
			"volumeMounts: [{name: health, mountPath: /health}]", "volumeMounts: [{name: health, mountPath: /usr/local/bin/live.sh, subPath: ping_primary.sh}]",
		).Replace(replicaWithScriptProbe) + cacheHealthScripts, true},
		{"a ConfigMap of another namespace", strings.Replace(replicaWithScriptProbe, "name: cache-replica}", "name: cache-replica, namespace: a}", 1) +
			strings.Replace(cacheHealthScripts, "name: cache-health}", "name: cache-health, namespace: b}", 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := Parse("cache.yaml", []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			got := only(Lint(inv, Config{}), "PG005")
			if !tc.want {
				if len(got) != 0 {
					t.Errorf("PG005 without the script in view: %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Severity != Error || got[0].Probe != "liveness" ||
				!strings.Contains(got[0].Message, "redis-cli") || !strings.Contains(got[0].Message, "ConfigMap cache-health") {
				t.Errorf("want one PG005 error on liveness naming redis-cli and the ConfigMap, got %+v", got)
			}
		})
	}
}
