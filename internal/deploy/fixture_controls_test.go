package deploy

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/scenario"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fixtureApp loads a fixture's target file and returns the app, its workload's first container and
// that container's literal env values.
func fixtureApp(t *testing.T, file string) (*App, map[string]any, map[string]string) {
	t.Helper()
	spec, err := scenario.LoadTargetSpec("../../fixtures/" + file)
	if err != nil {
		t.Fatal(err)
	}
	app, err := LoadApp(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(app.Workload.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", file, len(containers))
	}
	c := containers[0].(map[string]any)
	env, _, _ := unstructured.NestedSlice(c, "env")
	vals := map[string]string{}
	for _, e := range env {
		m := e.(map[string]any)
		if v, ok := m["value"].(string); ok {
			vals[m["name"].(string)] = v
		}
	}
	return app, c, vals
}

// The boot-lock control keeps its lock in an emptyDir, so that it outlives a container restart
// (the process-freeze control of docs/verdicts.md needs exactly that), and is otherwise the base app.
func TestBootLockFixtureLoads(t *testing.T) {
	app, c, env := fixtureApp(t, "nodb/boot-lock.target.yaml")
	volumes, _, _ := unstructured.NestedSlice(app.Workload.Object, "spec", "template", "spec", "volumes")
	mounts, _, _ := unstructured.NestedSlice(c, "volumeMounts")
	lock, ok := env["BOOT_LOCK"]
	if !ok || len(mounts) != 1 || len(volumes) != 1 {
		t.Fatalf("BOOT_LOCK %q (set: %v), mounts %v, volumes %v", lock, ok, mounts, volumes)
	}
	m, v := mounts[0].(map[string]any), volumes[0].(map[string]any)
	if _, ok := v["emptyDir"]; !ok || m["name"] != v["name"] || lock != m["mountPath"].(string)+"/boot.lock" {
		t.Errorf("lock %s, mount %v, volume %v: the lock must lie in an emptyDir", lock, m, v)
	}
}

// The join-slow control is the base app with JOIN_BOOTSTRAP set longer than its BOOTSTRAP_DURATION.
func TestJoinSlowFixtureLoads(t *testing.T) {
	_, _, env := fixtureApp(t, "nodb/join-slow.target.yaml")
	join, err1 := time.ParseDuration(env["JOIN_BOOTSTRAP"])
	boot, err2 := time.ParseDuration(env["BOOTSTRAP_DURATION"])
	if err1 != nil || err2 != nil || join < 3*boot {
		t.Errorf("JOIN_BOOTSTRAP %q, BOOTSTRAP_DURATION %q: a join must boot far slower than the set", env["JOIN_BOOTSTRAP"], env["BOOTSTRAP_DURATION"])
	}
}

// The bypass control's app reaches its database through an undeclared Service (db-direct) that
// selects the same pods as the declared one.
func TestBypassFixtureLoads(t *testing.T) {
	app, _, env := fixtureApp(t, "statefulset/bypass.target.yaml")
	if url := env["DATABASE_URL"]; !strings.Contains(url, "@db-direct:5432/") {
		t.Errorf("DATABASE_URL %q: the app must bypass Service db", url)
	}
	var direct bool
	for _, o := range app.Objects {
		if o.GetKind() == "Service" && o.GetName() == "db-direct" {
			sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector")
			direct = sel["app"] == "db"
		}
	}
	if deps := app.Spec.Dependencies; !direct || len(deps) != 1 || deps[0].Service != "db" {
		t.Errorf("db-direct selects the database: %v; dependencies %+v", direct, deps)
	}
}

// The lint --confirm control runs the always-ready app (readiness ignores the database) with its
// liveness endpoint declared a dependency check, which is what makes lint raise PG005 on it.
func TestFlaggedAlwaysReadyFixtureLoads(t *testing.T) {
	app, c, env := fixtureApp(t, "statefulset/flagged-always-ready.target.yaml")
	paths, _, _ := unstructured.NestedString(app.Workload.Object, "spec", "template", "metadata", "annotations", "probegate.dev/dependency-check-paths")
	live, _, _ := unstructured.NestedString(c, "livenessProbe", "httpGet", "path")
	if env["VARIANT"] != "always-ready" || live == "" || paths != live {
		t.Errorf("VARIANT %q, liveness path %q, dependency-check-paths %q: want always-ready with liveness declared a dependency check", env["VARIANT"], live, paths)
	}
}
