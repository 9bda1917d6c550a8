package lint

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
)

// TestLoadNamespaceFake checks which live objects are read (owners, not what they own) and that the
// rules run on them. A real cluster is exercised by TestIntegrationLintNamespace.
func TestLoadNamespaceFake(t *testing.T) {
	labels := map[string]string{"app": "api"}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz"}}}
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "api", Image: "api:1", LivenessProbe: probe, ReadinessProbe: probe,
			Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		}}},
	}
	owned := metav1.ObjectMeta{Name: "api-7d9-x", Namespace: "shop", OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "api-7d9"}}}
	client := fake.NewClientset(
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"}, Spec: appsv1.DeploymentSpec{Template: tmpl}},
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "api-7d9", Namespace: "shop", OwnerReferences: owned.OwnerReferences}, Spec: appsv1.ReplicaSetSpec{Template: tmpl}},
		&corev1.Pod{ObjectMeta: owned, Spec: tmpl.Spec},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "debug", Namespace: "shop"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "sh", Image: "debian"}}}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "other"}, Spec: appsv1.DeploymentSpec{Template: tmpl}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"}, Spec: corev1.ServiceSpec{Selector: labels, PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}},
	)
	inv, err := LoadNamespace(context.Background(), client, "shop")
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, w := range inv.Workloads {
		refs = append(refs, w.Ref())
	}
	if len(refs) != 2 || refs[0] != "deployment/api" || refs[1] != "pod/debug" {
		t.Errorf("workloads %v, want [deployment/api pod/debug]", refs)
	}
	if len(inv.Services) != 1 {
		t.Fatalf("%d services, want 1", len(inv.Services))
	}
	fs := Lint(inv, Config{})
	got := map[string]bool{}
	for _, f := range fs {
		got[f.RuleID] = true
		if f.Pos.File != "namespace/shop" || f.Pos.Line != 0 {
			t.Errorf("live finding position %v", f.Pos)
		}
	}
	for _, id := range []string{"PG001", "PG013"} {
		if !got[id] {
			t.Errorf("no %s finding on the live deployment; got %v", id, fs)
		}
	}
}
