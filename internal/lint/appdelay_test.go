package lint

import (
	"strings"
	"testing"
)

// TestWithdrawalDelayFromAppSettings: a flag or environment variable that tells the application to
// wait before it shuts down is its withdrawal delay. At or above the propagation PG009 has nothing to
// say; below it the finding names the setting and its value. A shutdown timeout, which bounds
// in-flight work after the listener closes, is no withdrawal delay.
func TestWithdrawalDelayFromAppSettings(t *testing.T) {
	cases := []struct {
		name, settings string
		finding        bool
		says, fix      string
	}{
		{"flag with =, a Go duration (kube-apiserver style)", "        args: [--secure-port=6443, --shutdown-delay-duration=15s]\n", false, "", ""},
		{"flag and value apart", "        args: [--shutdown-delay, \"10\"]\n", false, "", ""},
		{"environment variable in seconds", "        env: [{name: SHUTDOWN_DELAY_SECONDS, value: \"5\"}]\n", false, "", ""},
		{"a lame-duck period", "        args: [--lame-duck=20s]\n", false, "", ""},
		{"milliseconds by the name", "        env: [{name: PRE_STOP_SLEEP_MS, value: \"500\"}]\n", true,
			"env PRE_STOP_SLEEP_MS=500 holds the process up only 500ms after SIGTERM, under the 2s propagation", "raise env PRE_STOP_SLEEP_MS=500 to 5s"},
		{"a delay below the propagation", "        args: [--shutdown-delay-duration=1s]\n", true,
			"--shutdown-delay-duration=1s holds the process up only 1s", "raise --shutdown-delay-duration=1s to 5s"},
		{"a shutdown timeout is no delay", "        args: [--shutdown-timeout=30s]\n", true, "no preStop hook and no", "preStop"},
		{"a value from elsewhere cannot be read", "        env: [{name: SHUTDOWN_DELAY, valueFrom: {configMapKeyRef: {name: cfg, key: delay}}}]\n", true, "no preStop hook and no", "preStop"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			container := "        image: app:1\n        ports: [{name: http, containerPort: 8080}]\n" + tc.settings +
				"        readinessProbe: {httpGet: {path: /ready, port: http}, periodSeconds: 5}\n"
			inv, err := Parse("app.yaml", []byte(realManifest("Deployment", "web", "3", "", container, svcHTTP)))
			if err != nil {
				t.Fatal(err)
			}
			fs := only(Lint(inv, Config{}), "PG009")
			if !tc.finding {
				if len(fs) != 0 {
					t.Errorf("want no PG009 finding, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Severity != Warning || !strings.Contains(fs[0].Message, tc.says) || !strings.Contains(fs[0].Fix, tc.fix) {
				t.Errorf("got %+v; want one warning saying %q, fix with %q", fs, tc.says, tc.fix)
			}
		})
	}
}
