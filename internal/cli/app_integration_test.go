package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/testcluster"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// The bundled good target, handed over as a user would: its plain manifests and PostgreSQL's,
// rendered by a kustomization that points DATABASE_URL straight at the database (no toxiproxy of
// ours in them), with the database declared as a dependency. probegate must interpose toxiproxy on
// that path itself, prove the latency took effect on it, and judge db-slowness as on the bundled
// deployment: every verdict PASS, requests tied to pods by conntrack (the header is not named).
func TestIntegrationUserManifestsWithDependency(t *testing.T) {
	testcluster.Require(t)
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"postgres.yaml", "good.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "manifests", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(app, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(app, "kustomization.yaml"), `resources: [postgres.yaml, good.yaml]
patches:
- patch: |
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: target}
    spec:
      template:
        spec:
          containers:
          - name: target
            env:
            - {name: DATABASE_URL, value: "postgres://postgres@postgres:5432/postgres?sslmode=disable"}
`)
	target := filepath.Join(dir, "target.yaml")
	write(target, `name: shop
manifests: [app]
workload: deployment/target
service: target
requests: {default: /work, takes: "/slow?d={duration}"}
stall: {port: 9090, path: /admin/stall}
dependencies:
- {name: postgres, service: postgres, port: 5432, protocol: postgres}
`)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runMain(t, "run", "--target", target, "--scenario", "db-slowness", "--out", out)
	t.Logf("stdout:\n%s\nstderr (tail): %s", stdout, tail(stderr, 3000))
	if code != 0 {
		t.Fatalf("exit %d, want 0 (PASS)", code)
	}
	rep, err := reports.LoadDir(out) // report.json with each scenario's timeline and requests
	if err != nil {
		t.Fatal(err)
	}
	sc := rep.Scenarios[0]
	for _, v := range sc.Verdicts {
		if v.Status != verdict.Pass {
			t.Errorf("%s %s: %s %v", v.Rule, v.Status, v.Observed, v.Unshown)
		}
	}
	if sc.Oracle == nil || sc.Oracle.Readiness == nil || !strings.Contains(sc.Oracle.Readiness.Probe.Handler, "/health/ready") {
		t.Errorf("the oracle is not the manifests' own readiness probe: %+v", sc.Oracle)
	}
	var confirmed bool
	for _, e := range sc.Timeline.Entries() {
		if fa := e.Fault; fa != nil && fa.Action == timeline.FaultObserve && fa.Params[timeline.ParamEffect] == timeline.EffectConfirmed &&
			fa.Params[timeline.ParamPhase] == timeline.PhaseDuring {
			confirmed = strings.Contains(fa.Detail, "toxiproxy proxy postgres")
		}
	}
	if !confirmed {
		t.Errorf("no confirmed proof of the latency on the interposed proxy")
	}
	if a := sc.Attribution; a == nil || a.Coverage < 0.99 || a.ByHeader != 0 {
		t.Errorf("attribution %+v: want ≥ 99 %% by conntrack alone", a)
	}
}
