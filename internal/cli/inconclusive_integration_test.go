package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/testcluster"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// A --target app that declares no dependency cannot take db-slowness's fault. The run used to
// report PASS and exit 0 having tested nothing; now every verdict that rested on the fault is
// INCONCLUSIVE, the run exits 3, and the terminal, report.json, junit.xml and report.html each name
// the skipped fault. The app is toxiproxy's own server (built from its module, written by nobody
// here), serving its HTTP API, from manifests as a user would write them.
func TestIntegrationCustomTargetSkippedFaultIsInconclusive(t *testing.T) {
	testcluster.Require(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "target.yaml")
	spec := `name: toxiproxy-api
manifests: [app.yaml]
workload: deployment/api
service: api
requests: {default: /version}
`
	manifests := `apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports: [{name: http, port: 80, targetPort: 8474}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: api
        image: probegate/toxiproxy:dev
        readinessProbe: {httpGet: {path: /version, port: 8474}, periodSeconds: 2}
        livenessProbe: {httpGet: {path: /version, port: 8474}, periodSeconds: 5, failureThreshold: 3}
`
	if err := os.WriteFile(target, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runMain(t, "run", "--target", target, "--scenario", "db-slowness", "--out", out)
	t.Logf("stdout:\n%s\nstderr (tail): %s", stdout, tail(stderr, 2000))
	if code != ExitInconclusive {
		t.Fatalf("exit %d, want %d (INCONCLUSIVE)", code, ExitInconclusive)
	}
	if !strings.Contains(stdout, "could not show: db-latency") || !strings.Contains(stdout, "1 inconclusive") {
		t.Errorf("the terminal summary does not name the skipped fault")
	}
	f, err := os.Open(filepath.Join(out, reports.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := reports.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := rep.Scenarios[0]
	if sc.Status() != verdict.Inconclusive {
		t.Errorf("scenario status %s, want INCONCLUSIVE", sc.Status())
	}
	for _, v := range sc.Verdicts {
		if v.Status == verdict.Pass {
			t.Errorf("%s PASSed with its fault skipped: %s", v.Rule, v.Observed)
		}
		if v.Status == verdict.Inconclusive && !strings.Contains(strings.Join(v.Unshown, " "), "db-latency") {
			t.Errorf("%s is INCONCLUSIVE without naming the fault: %q", v.Rule, v.Unshown)
		}
	}
	for _, file := range []string{reports.JUnitFile, reports.HTMLFile} {
		b, err := os.ReadFile(filepath.Join(out, file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "db-latency (faults[0]) was skipped") {
			t.Errorf("%s does not name the skipped fault", file)
		}
		if file == reports.JUnitFile && !strings.Contains(string(b), `type="inconclusive"`) {
			t.Errorf("junit.xml has no inconclusive error")
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
