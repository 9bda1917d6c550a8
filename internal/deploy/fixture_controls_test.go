package deploy

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/scenario"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The boot-lock control keeps its lock in an emptyDir, so that it outlives a container restart
// (the process-freeze control of docs/verdicts.md needs exactly that), and is otherwise the base app.
func TestBootLockFixtureLoads(t *testing.T) {
	spec, err := scenario.LoadTargetSpec("../../fixtures/nodb/boot-lock.target.yaml")
	if err != nil {
		t.Fatal(err)
	}
	app, err := LoadApp(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(app.Workload.Object, "spec", "template", "spec", "containers")
	volumes, _, _ := unstructured.NestedSlice(app.Workload.Object, "spec", "template", "spec", "volumes")
	if len(containers) != 1 || len(volumes) != 1 {
		t.Fatalf("%d containers, %d volumes", len(containers), len(volumes))
	}
	c := containers[0].(map[string]any)
	env, _, _ := unstructured.NestedSlice(c, "env")
	i := slices.IndexFunc(env, func(e any) bool { return e.(map[string]any)["name"] == "BOOT_LOCK" })
	mounts, _, _ := unstructured.NestedSlice(c, "volumeMounts")
	if i < 0 || len(mounts) != 1 {
		t.Fatalf("BOOT_LOCK at %d, mounts %v", i, mounts)
	}
	lock := env[i].(map[string]any)["value"].(string)
	m, v := mounts[0].(map[string]any), volumes[0].(map[string]any)
	if _, ok := v["emptyDir"]; !ok || m["name"] != v["name"] || lock != m["mountPath"].(string)+"/boot.lock" {
		t.Errorf("lock %s, mount %v, volume %v: the lock must lie in an emptyDir", lock, m, v)
	}
}

// The join-slow control is the base app with JOIN_BOOTSTRAP set longer than its BOOTSTRAP_DURATION.
func TestJoinSlowFixtureLoads(t *testing.T) {
	spec, err := scenario.LoadTargetSpec("../../fixtures/nodb/join-slow.target.yaml")
	if err != nil {
		t.Fatal(err)
	}
	app, err := LoadApp(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(app.Workload.Object, "spec", "template", "spec", "containers")
	env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
	vals := map[string]string{}
	for _, e := range env {
		m := e.(map[string]any)
		if v, ok := m["value"].(string); ok {
			vals[m["name"].(string)] = v
		}
	}
	join, err1 := time.ParseDuration(vals["JOIN_BOOTSTRAP"])
	boot, err2 := time.ParseDuration(vals["BOOTSTRAP_DURATION"])
	if err1 != nil || err2 != nil || join < 3*boot {
		t.Errorf("JOIN_BOOTSTRAP %q, BOOTSTRAP_DURATION %q: a join must boot far slower than the set", vals["JOIN_BOOTSTRAP"], vals["BOOTSTRAP_DURATION"])
	}
}

// The bypass control's app reaches its database through an undeclared Service (db-direct) that
// selects the same pods as the declared one.
func TestBypassFixtureLoads(t *testing.T) {
	spec, err := scenario.LoadTargetSpec("../../fixtures/statefulset/bypass.target.yaml")
	if err != nil {
		t.Fatal(err)
	}
	app, err := LoadApp(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(app.Workload.Object, "spec", "template", "spec", "containers")
	env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
	url := ""
	for _, e := range env {
		if m := e.(map[string]any); m["name"] == "DATABASE_URL" {
			url, _ = m["value"].(string)
		}
	}
	if !strings.Contains(url, "@db-direct:5432/") {
		t.Errorf("DATABASE_URL %q: the app must bypass Service db", url)
	}
	var direct bool
	for _, o := range app.Objects {
		if o.GetKind() == "Service" && o.GetName() == "db-direct" {
			sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector")
			direct = sel["app"] == "db"
		}
	}
	if !direct || len(spec.Dependencies) != 1 || spec.Dependencies[0].Service != "db" {
		t.Errorf("db-direct selects the database: %v; dependencies %+v", direct, spec.Dependencies)
	}
}
