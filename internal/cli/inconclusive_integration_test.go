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

// A --target app that declares no dependency does not take db-slowness's fault. The run once
// reported PASS and exit 0 having tested nothing, then INCONCLUSIVE; the scenario does not apply to
// the app by its own declaration, so it is NOT APPLICABLE: nothing deployed, every verdict so, and
// the terminal, report.json, junit.xml (<skipped>) and report.html each say why. With nothing else
// run the exit is 3: nothing was shown. The app is toxiproxy's own server (built from its module,
// written by nobody here), serving its HTTP API, from manifests as a user would write them.
func TestIntegrationCustomTargetWithoutDependencyNotApplicable(t *testing.T) {
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
		t.Fatalf("exit %d, want %d (no scenario applied: nothing shown)", code, ExitInconclusive)
	}
	const why = "target toxiproxy-api declares no dependency"
	if !strings.Contains(stdout, "NOT APPLICABLE  db-slowness") || !strings.Contains(stdout, why) || !strings.Contains(stdout, "1 not applicable") {
		t.Errorf("the terminal summary does not say the scenario does not apply, and why")
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
	if sc.Status() != verdict.NotApplicable || !strings.Contains(sc.NotApplicable, why) || sc.Namespace != "" {
		t.Errorf("scenario status %s, why %q, namespace %q; want NOT APPLICABLE with the reason and nothing deployed", sc.Status(), sc.NotApplicable, sc.Namespace)
	}
	for _, v := range sc.Verdicts {
		if v.Status != verdict.NotApplicable {
			t.Errorf("%s is %s on a scenario that does not apply: %s", v.Rule, v.Status, v.Observed)
		}
	}
	for _, file := range []string{reports.JUnitFile, reports.HTMLFile} {
		b, err := os.ReadFile(filepath.Join(out, file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), why) {
			t.Errorf("%s does not say why the scenario does not apply", file)
		}
		if file == reports.JUnitFile && (!strings.Contains(string(b), "<skipped message=") || strings.Contains(string(b), "<failure") || strings.Contains(string(b), "<error")) {
			t.Errorf("junit.xml: want <skipped> only")
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
