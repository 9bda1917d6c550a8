package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/probegate/probegate/internal/scenario"
)

// writeTarget writes a target file beside copies of testdata/app and returns its spec.
func writeTarget(t *testing.T, body string) *scenario.TargetSpec {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/app")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "target.yaml")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, err := scenario.LoadTargetSpec(file)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

const shopTarget = `name: shop
manifests: [app.yaml]
workload: deployment/web
service: web
port: http
images: {registry.example/shop/web: local/web:rc1, "postgres:16": probegate/postgres:dev}
dependencies:
- {name: db, service: db, port: 5432, protocol: postgres}
`

func TestLoadAppReadsTheUsersObjects(t *testing.T) {
	app, err := LoadApp(writeTarget(t, strings.Replace(shopTarget, "registry.example/shop/web:", "registry.example/shop/web:1.2:", 1)),
		map[string]string{"registry.example/shop/web": "local/web:rc2"})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range app.Objects {
		kinds = append(kinds, o.GetKind()+"/"+o.GetName())
	}
	if got := strings.Join(kinds, " "); got != "Service/web Deployment/web Service/db StatefulSet/db HorizontalPodAutoscaler/web" {
		t.Errorf("objects %s", got)
	}
	if len(app.Skipped) != 1 || app.Skipped[0] != "namespace/shop" {
		t.Errorf("skipped %v, want the Namespace object", app.Skipped)
	}
	if app.Container != "web" || app.Port.Port != 80 || app.Selector["app"] != "web" {
		t.Errorf("container %q port %d selector %v", app.Container, app.Port.Port, app.Selector)
	}
	// The CLI's swap wins over the file's; digests are left alone; every
	// container is IfNotPresent (offline); nothing else changes.
	want := "local/web:rc2 probegate/postgres:dev registry.example/shop/agent@sha256:0123"
	if got := strings.Join(app.Images, " "); got != want {
		t.Errorf("images %q, want %q", got, want)
	}
	_ = eachContainer(app.Workload, func(c map[string]any) error {
		if c["imagePullPolicy"] != "IfNotPresent" {
			t.Errorf("container %v pull policy %v", c["name"], c["imagePullPolicy"])
		}
		return nil
	})
	ctrs, _, _ := unstructured.NestedSlice(app.Workload.Object, "spec", "template", "spec", "containers")
	if p, _, _ := unstructured.NestedInt64(ctrs[0].(map[string]any), "readinessProbe", "periodSeconds"); p != 5 {
		t.Errorf("the user's readiness period became %d", p)
	}
	if len(app.Dependencies) != 1 || app.Dependencies[0].Service.Name != "db" {
		t.Errorf("dependencies %+v", app.Dependencies)
	}
}

func TestLoadAppRendersKustomize(t *testing.T) {
	app, err := LoadApp(writeTarget(t, "name: shop\nmanifests: [kustomize]\nworkload: deployment/k-web\nservice: k-web\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if app.Workload.GetName() != "k-web" || app.Selector["team"] != "shop" || app.Port.Port != 80 {
		t.Errorf("kustomize output not used: workload %s selector %v", app.Workload.GetName(), app.Selector)
	}
}

// Each mistake in a target file or its manifests is one line naming what is wrong.
func TestLoadAppRejects(t *testing.T) {
	cases := []struct {
		name, spec string
		swaps      map[string]string
		want       string
	}{
		{"missing manifests", "name: a\nmanifests: [nope.yaml]\nworkload: deployment/web\nservice: web\n", nil,
			"target a: manifests: stat "},
		{"no such workload", "name: a\nmanifests: [app.yaml]\nworkload: deployment/api\nservice: web\n", nil,
			"target a: workload deployment/api: not in the manifests (they hold: deployment/web, statefulset/db)"},
		{"no such container", "name: a\nmanifests: [app.yaml]\nworkload: deployment/web\ncontainer: app\nservice: web\n", nil,
			`target a: workload deployment/web: no container "app" (it has: web, sidecar)`},
		{"service selects nothing", "name: a\nmanifests: [app.yaml]\nworkload: statefulset/db\nservice: web\n", nil,
			"target a: service web selects app=web, which the pods of statefulset/db do not carry (their labels: app=db): it would route to nothing"},
		{"no such port", "name: a\nmanifests: [app.yaml]\nworkload: deployment/web\nservice: web\nport: grpc\n", nil,
			`target a: service web: no port "grpc" (it has: http/80, metrics/9100)`},
		{"missing dependency service", "name: a\nmanifests: [app.yaml]\nworkload: deployment/web\nservice: web\ndependencies: [{name: cache, service: redis, port: 6379}]\n", nil,
			"target a: dependency cache: service redis: not in the manifests (they hold: web, db)"},
		{"unused swap", "name: a\nmanifests: [app.yaml]\nworkload: deployment/web\nservice: web\n", map[string]string{"nginx": "x"},
			"target a: image swap nginx: no container of the manifests runs that image"},
		{"kustomize error", "name: a\nmanifests: [broken]\nworkload: deployment/web\nservice: web\n", nil,
			"target a: manifests: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := writeTarget(t, tc.spec)
			broken := filepath.Join(filepath.Dir(spec.File), "broken")
			_ = os.Mkdir(broken, 0o755)
			_ = os.WriteFile(filepath.Join(broken, "kustomization.yaml"), []byte("resources: [missing.yaml]\n"), 0o644)
			_, err := LoadApp(spec, tc.swaps)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error\n got %q\nwant %q…", err, tc.want)
			}
		})
	}
}

func TestLoadAppRejectsClusterScopedAndHelmTemplates(t *testing.T) {
	spec := writeTarget(t, "name: a\nmanifests: [extra.yaml, app.yaml]\nworkload: deployment/web\nservice: web\n")
	extra := filepath.Join(filepath.Dir(spec.File), "extra.yaml")
	_ = os.WriteFile(extra, []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\n"), 0o644)
	if _, err := LoadApp(spec, nil); err == nil || !strings.Contains(err.Error(), "ClusterRole reader is cluster-scoped") {
		t.Errorf("cluster-scoped object: %v", err)
	}
	_ = os.WriteFile(extra, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n"), 0o644)
	if _, err := LoadApp(spec, nil); err == nil || !strings.Contains(err.Error(), "unrendered Helm template") {
		t.Errorf("helm template: %v", err)
	}
}

// Each scenario's copy runs the scenario's replicas, with the workload's autoscaler pinned to them;
// the loaded objects themselves stay as read.
func TestAppInstanceScalesAndPinsTheAutoscaler(t *testing.T) {
	app, err := LoadApp(writeTarget(t, shopTarget), nil)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := app.instance(3, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		switch o.GetKind() + "/" + o.GetName() {
		case "Deployment/web":
			if n := replicasOf(o); n != 3 {
				t.Errorf("workload replicas %d, want 3", n)
			}
		case "StatefulSet/db":
			if n := replicasOf(o); n != 1 {
				t.Errorf("another workload was scaled to %d", n)
			}
		case "HorizontalPodAutoscaler/web":
			lo, _, _ := unstructured.NestedInt64(o.Object, "spec", "minReplicas")
			hi, _, _ := unstructured.NestedInt64(o.Object, "spec", "maxReplicas")
			if lo != 3 || hi != 3 {
				t.Errorf("autoscaler %d..%d, want pinned to 3", lo, hi)
			}
		}
	}
	for _, o := range objs {
		ports, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
		for _, p := range ports {
			if np, ok := p.(map[string]any)["nodePort"]; ok {
				t.Errorf("%s keeps nodePort %v: parallel scenarios would fight over it", o.GetName(), np)
			}
		}
	}
	if n := replicasOf(app.Workload); n != 2 {
		t.Errorf("the loaded workload changed: replicas %d", n)
	}
}
