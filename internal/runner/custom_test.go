package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/probegate/probegate/internal/scenario"
)

func TestCustomDeploymentFromSpec(t *testing.T) {
	spec, err := scenario.ParseTargetSpec("t.yaml", []byte(`name: shop
image: shop:dev
port: 8000
probes: {liveness: /livez, readiness: /readyz, startup: /startz}
admin: {port: 9000, stall: /stall}
env: {MODE: test}
`))
	if err != nil {
		t.Fatal(err)
	}
	d := customDeployment(spec, InstallRequest{Replicas: 2}, map[string]string{"app": "shop"})
	c := d.Spec.Template.Spec.Containers[0]
	if *d.Spec.Replicas != 2 || c.Image != "shop:dev" || len(c.Ports) != 2 || c.Ports[1].ContainerPort != 9000 {
		t.Fatalf("deployment = %+v", d.Spec)
	}
	if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.ReadinessProbe.PeriodSeconds != 1 || c.ReadinessProbe.FailureThreshold != 2 {
		t.Errorf("readiness = %+v", c.ReadinessProbe)
	}
	if c.LivenessProbe.HTTPGet.Path != "/livez" || c.StartupProbe.HTTPGet.Path != "/startz" || c.StartupProbe.FailureThreshold != 60 {
		t.Errorf("liveness %+v startup %+v", c.LivenessProbe, c.StartupProbe)
	}
	env := map[string]bool{}
	for _, e := range c.Env {
		env[e.Name] = true
	}
	if !env["MODE"] || !env["POD_NAME"] {
		t.Errorf("env = %+v", c.Env)
	}
}

// An existing Deployment is reached through an extra NodePort Service with its selector, which is
// removed again when the target never gets ready.
func TestCustomExistingDeploymentCleansUp(t *testing.T) {
	replicas := int32(2)
	client := fake.NewClientset(&appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "prod"},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}},
	})
	spec := &scenario.TargetSpec{Name: "api", Deployment: "api", Namespace: "prod", Service: "api", Port: 8080, Path: "/"}
	d := CustomDeployer{Timeout: 300 * time.Millisecond}
	c := &Cluster{Client: client}
	if err := d.Preflight(context.Background(), c, nil, spec); err != nil {
		t.Fatalf("preflight: %v", err)
	}
	_, err := d.Install(context.Background(), c, InstallRequest{Namespace: "ignored", Custom: spec, Replicas: 3, Slot: 1})
	if err == nil || !strings.Contains(err.Error(), "target api not ready: 0/2 replicas available") {
		t.Fatalf("err = %v", err)
	}
	if _, err := client.CoreV1().Services("prod").Get(context.Background(), "probegate-slot-1", metav1.GetOptions{}); err == nil {
		t.Errorf("the extra service was left behind")
	}
	spec.Deployment = "missing"
	if err := d.Preflight(context.Background(), c, nil, spec); err == nil || !strings.Contains(err.Error(), "deployment prod/missing") {
		t.Errorf("preflight of a missing deployment: %v", err)
	}
}
