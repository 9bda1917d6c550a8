package deploy

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// tunePatch is what `probegate tune -o patch` writes for no-startup-probe after a cold start and
// short-grace's drain: a startup probe on the liveness handler, liveness's initial delay dropped,
// a preStop sleep and a longer grace period.
const tunePatch = `# probegate tune: deployment/target container target (fixture no-startup-probe)
apiVersion: apps/v1
kind: Deployment
metadata:
  name: target
spec:
  template:
    spec:
      containers:
      - name: target
        livenessProbe:
          initialDelaySeconds: 0
        startupProbe:
          failureThreshold: 8
          httpGet: {path: /health/live, port: http}
          periodSeconds: 5
          timeoutSeconds: 1
        lifecycle:
          preStop:
            sleep: {seconds: 3}
      terminationGracePeriodSeconds: 40
`

func targetDeployment(t *testing.T, opts Options) *appsv1.Deployment {
	t.Helper()
	if err := opts.defaults(); err != nil {
		t.Fatal(err)
	}
	objs, err := objectsFor(opts.Variant, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok && d.Name == TargetName {
			return d
		}
	}
	t.Fatal("no target deployment")
	return nil
}

func TestPatchMergesProbesAndGraceIntoTheFixtureVariant(t *testing.T) {
	plain := targetDeployment(t, Options{Namespace: "ns", Variant: "no-startup-probe"})
	d := targetDeployment(t, Options{Namespace: "ns", Variant: "no-startup-probe", Replicas: 2,
		Env: map[string]string{"BOOTSTRAP_DURATION": "25s"}, Patch: []byte(tunePatch)})
	spec := d.Spec.Template.Spec
	if g := spec.TerminationGracePeriodSeconds; g == nil || *g != 40 {
		t.Errorf("terminationGracePeriodSeconds %v, want 40", g)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want the one target container merged by name", len(spec.Containers))
	}
	c := spec.Containers[0]
	sp := c.StartupProbe
	if sp == nil || sp.HTTPGet == nil || sp.HTTPGet.Path != "/health/live" || sp.PeriodSeconds != 5 || sp.FailureThreshold != 8 {
		t.Fatalf("startupProbe %+v, want the patch's", sp)
	}
	was, lv := plain.Spec.Template.Spec.Containers[0].LivenessProbe, c.LivenessProbe
	if was.InitialDelaySeconds != 10 {
		t.Fatalf("the variant's liveness initialDelaySeconds is %d: the fixture changed, fix the test", was.InitialDelaySeconds)
	}
	if lv.InitialDelaySeconds != 0 || lv.HTTPGet == nil || lv.HTTPGet.Path != was.HTTPGet.Path ||
		lv.PeriodSeconds != was.PeriodSeconds || lv.FailureThreshold != was.FailureThreshold {
		t.Errorf("livenessProbe %+v: want only initialDelaySeconds changed (to 0) from %+v", lv, was)
	}
	if rd, rdWas := c.ReadinessProbe, plain.Spec.Template.Spec.Containers[0].ReadinessProbe; rd == nil || rd.HTTPGet.Path != rdWas.HTTPGet.Path || rd.PeriodSeconds != rdWas.PeriodSeconds {
		t.Errorf("readinessProbe %+v changed, want it left as %+v", rd, rdWas)
	}
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds != 3 {
		t.Errorf("lifecycle %+v, want preStop sleep 3", c.Lifecycle)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["VARIANT"] != "no-startup-probe" || env["BOOTSTRAP_DURATION"] != "25s" || len(c.Env) != len(plain.Spec.Template.Spec.Containers[0].Env) {
		t.Errorf("env %v: the patch must keep the variant's env and the overrides", env)
	}
	if c.Image != DefaultTargetImage || *d.Spec.Replicas != 2 || d.Namespace != "ns" {
		t.Errorf("image %s, replicas %d, namespace %s: the patch undid the overrides", c.Image, *d.Spec.Replicas, d.Namespace)
	}
}

func TestPatchReplacesAnExecSleepWithTheNativeSleep(t *testing.T) {
	d := targetDeployment(t, Options{Namespace: "ns", Variant: "good"})
	d.Spec.Template.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}}
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"target","lifecycle":{"preStop":{"exec":null,"sleep":{"seconds":7}}}}]}}}}`
	if err := patchDeployment(d, []byte(patch)); err != nil {
		t.Fatal(err)
	}
	h := d.Spec.Template.Spec.Containers[0].Lifecycle.PreStop
	if h.Exec != nil || h.Sleep == nil || h.Sleep.Seconds != 7 {
		t.Errorf("preStop %+v, want exec removed and sleep 7", h)
	}
}

func TestPatchTheUsersWorkloadOnly(t *testing.T) {
	app, err := LoadApp(writeTarget(t, shopTarget), nil)
	if err != nil {
		t.Fatal(err)
	}
	patch := `kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      terminationGracePeriodSeconds: 45
      containers:
      - name: web
        readinessProbe: {timeoutSeconds: 3}
        lifecycle: {preStop: {sleep: {seconds: 4}}}
`
	objs, err := app.instance(3, []byte(patch))
	if err != nil {
		t.Fatal(err)
	}
	var web *appsv1.Deployment
	for _, o := range objs {
		if o.GetKind() == "Deployment" && o.GetName() == "web" {
			web = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, web); err != nil {
				t.Fatal(err)
			}
		}
		if o.GetKind() == "StatefulSet" {
			if _, found, _ := unstructured.NestedInt64(o.Object, "spec", "template", "spec", "terminationGracePeriodSeconds"); found {
				t.Error("the patch reached another workload")
			}
		}
	}
	spec := web.Spec.Template.Spec
	if g := spec.TerminationGracePeriodSeconds; g == nil || *g != 45 || *web.Spec.Replicas != 3 {
		t.Errorf("grace %v replicas %d, want 45 and 3", g, *web.Spec.Replicas)
	}
	if len(spec.Containers) != 2 || len(spec.InitContainers) != 1 {
		t.Fatalf("%d containers, %d init containers: want 2 and 1 (merged by name)", len(spec.Containers), len(spec.InitContainers))
	}
	for _, c := range spec.Containers {
		switch c.Name {
		case "web":
			rp := c.ReadinessProbe
			if rp == nil || rp.TimeoutSeconds != 3 || rp.PeriodSeconds != 5 || rp.HTTPGet == nil || rp.HTTPGet.Path != "/ready" {
				t.Errorf("web readinessProbe %+v, want timeout 3 with its own handler and period", rp)
			}
			if c.Image != "local/web:rc1" || c.ImagePullPolicy != corev1.PullIfNotPresent {
				t.Errorf("web image %s %s: the patch undid the swap", c.Image, c.ImagePullPolicy)
			}
			if c.Lifecycle == nil || c.Lifecycle.PreStop.Sleep.Seconds != 4 {
				t.Errorf("web lifecycle %+v", c.Lifecycle)
			}
		case "sidecar":
			if c.Lifecycle != nil || c.ReadinessProbe != nil {
				t.Errorf("sidecar changed: %+v", c)
			}
		}
	}
	if g, _, _ := unstructured.NestedInt64(app.Workload.Object, "spec", "template", "spec", "terminationGracePeriodSeconds"); g != 0 {
		t.Error("the loaded workload itself was patched: every later scenario would inherit it")
	}
}

func TestPatchRejectsAPatchForSomethingElse(t *testing.T) {
	cases := map[string]string{
		"other name":    "kind: Deployment\nmetadata: {name: web}\n",
		"other kind":    "kind: StatefulSet\nmetadata: {name: target}\n",
		"not an object": "- a\n- b\n",
	}
	for name, patch := range cases {
		err := Options{Namespace: "ns", Patch: []byte(patch)}.Validate()
		if err == nil || !strings.Contains(err.Error(), "patch") {
			t.Errorf("%s: error %v, want a patch error", name, err)
		}
	}
	if err := (Options{Namespace: "ns", Patch: []byte(tunePatch)}).Validate(); err != nil {
		t.Errorf("tune's patch: %v", err)
	}
}
