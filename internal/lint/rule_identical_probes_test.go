package lint

import (
	"strings"
	"testing"
)

// TestSharedCheckWithOrderedThresholds: liveness and readiness on one check is an error with the same
// thresholds and a warning with different ones, unless a startupProbe guards the start and liveness
// already waits past readiness's worst withdrawal (kwok's controller: /healthz for both, liveness
// 10 × 60 s, readiness 5 × 20 s): then the pod leaves the Service minutes before a restart and the
// finding is info, unless the check is named for readiness (a restart on every long withdrawal).
// Where liveness already waits, the fix no longer asks for thresholds the manifest has.
func TestSharedCheckWithOrderedThresholds(t *testing.T) {
	const ready = "        readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 20, timeoutSeconds: 2, failureThreshold: 5}\n"
	const startup = "        startupProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 10}\n"
	cases := []struct {
		name, probes string
		want         Severity
		says, fix    string
	}{
		{"ordered, startupProbe: info", startup + ready +
			"        livenessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 60, failureThreshold: 10}\n",
			Info, "liveness already waits (F−1)·P = 9m0s, past readiness's worst withdrawal 1m44s", "thresholds already wait past readiness's worst withdrawal 1m44s"},
		{"ordered, no startupProbe: the shared check gates the start", ready +
			"        livenessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 60, failureThreshold: 10}\n",
			Warning, "with no startupProbe", "thresholds already wait"},
		{"ordered, startupProbe, but the check is named for readiness", startup +
			strings.ReplaceAll(ready, "/healthz", "/readyz") +
			"        livenessProbe: {httpGet: {path: /readyz, port: http}, periodSeconds: 60, failureThreshold: 10}\n",
			Warning, "whatever withdraws the pod also restarts it", "thresholds already wait"},
		{"startupProbe, liveness fires inside readiness's window", startup + ready +
			"        livenessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 20, failureThreshold: 3}\n",
			Warning, "whatever withdraws the pod also restarts it", "failureThreshold ≥ 7 at periodSeconds 20"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			container := "        image: ctl:1\n        ports: [{name: http, containerPort: 10247}]\n" + tc.probes
			inv, err := Parse("ctl.yaml", []byte(realManifest("Deployment", "web", "1", "", container, svcHTTP)))
			if err != nil {
				t.Fatal(err)
			}
			fs := only(Lint(inv, Config{}), "PG001")
			if len(fs) != 1 {
				t.Fatalf("want one PG001 finding, got %+v", fs)
			}
			if fs[0].Severity != tc.want || !strings.Contains(fs[0].Message, tc.says) || !strings.Contains(fs[0].Fix, tc.fix) {
				t.Errorf("got %s %q, fix %q; want %s saying %q, fix with %q", fs[0].Severity, fs[0].Message, fs[0].Fix, tc.want, tc.says, tc.fix)
			}
		})
	}
}
