package lint

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLoadKustomization: a directory with a kustomization is linted as kustomize builds it. The
// pattern is metrics-server's manifests/base: the Service and the pods get their common label only
// from the kustomization, so read as plain files the Service selects nothing and the drain and
// readiness rules stay silent. Findings still point at the source files.
func TestLoadKustomization(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "app")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("kustomization.yaml", `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namePrefix: x-
labels:
- pairs: {app: api}
  includeSelectors: true
resources: [deployment.yaml, service.yaml]
`)
	write("deployment.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: api
        image: api:1
        ports: [{name: http, containerPort: 8080}]
        readinessProbe: {httpGet: {path: /ready, port: http}}
`)
	write("service.yaml", `apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  ports: [{name: http, port: 80, targetPort: http}]
`)
	inv, err := LoadPaths([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Problems) != 0 || len(inv.Workloads) != 1 || len(inv.Services) != 1 || len(inv.Skipped) != 0 {
		t.Fatalf("inventory: %d workloads, %d services, skipped %v, problems %v; want the built Deployment and Service only",
			len(inv.Workloads), len(inv.Services), inv.Skipped, inv.Problems)
	}
	w := inv.Workloads[0]
	if w.Name != "x-api" || w.Pos.File != filepath.Join(dir, "deployment.yaml") || w.Pos.Line != 1 {
		t.Errorf("workload %s at %v, want x-api at deployment.yaml:1", w.Name, w.Pos)
	}
	rep := NewReport(inv, Config{}, Warning)
	var pg009 *Finding
	for i, f := range rep.Findings {
		if f.RuleID == "PG009" {
			pg009 = &rep.Findings[i]
		}
	}
	if pg009 == nil {
		t.Fatalf("no PG009 finding: the kustomization's label should make the Service route to the pods; got %v", ruleSet(rep.Findings))
	}
	if want := (Position{File: filepath.Join(dir, "deployment.yaml"), Line: 9}); pg009.Pos != want {
		t.Errorf("PG009 at %v, want the container in the source file, %v", pg009.Pos, want)
	}

	// Below a directory named on the command line, a kustomization is read as plain files (as
	// kubectl apply -R would) and the kustomization file is skipped, not bad input.
	inv, err = LoadPaths([]string{parent}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Problems) != 0 || len(inv.Workloads) != 1 || inv.Workloads[0].Name != "api" || len(inv.Skipped) != 1 || inv.Skipped[0].Kind != "Kustomization" {
		t.Errorf("walked parent: %d workloads, skipped %v, problems %v; want the plain Deployment and the kustomization skipped", len(inv.Workloads), inv.Skipped, inv.Problems)
	}

	// A kustomization that cannot be built is a problem of its own; its files are still read.
	write("kustomization.yaml", "resources: [missing.yaml]\n")
	inv, err = LoadPaths([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Problems) != 1 || inv.Problems[0].Pos.File != filepath.Join(dir, "kustomization.yaml") || len(inv.Workloads) != 1 {
		t.Errorf("unbuildable kustomization: problems %v, %d workloads; want one problem at kustomization.yaml and the plain Deployment", inv.Problems, len(inv.Workloads))
	}
}
