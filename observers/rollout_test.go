package observers

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate/internal/timeline"
)

func TestRolloutProgress(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Generation: 1},
		Spec:   appsv1.DeploymentSpec{Replicas: ptr(int32(2))},
		Status: appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}}
	other := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "postgres", Namespace: ns}}
	r := newRig(t, Options{Deployment: "web"}, d, other)
	entriesWhen(r, "initial", func(l []string) bool { return len(l) >= 1 }, timeline.KindRollout)
	d.Generation = 2
	d.Spec.Replicas = ptr(int32(3))
	if _, err := r.client.AppsV1().Deployments(ns).Update(context.Background(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.UnavailableReplicas = 3, 3, 1
	if _, err := r.client.AppsV1().Deployments(ns).UpdateStatus(context.Background(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	d.Status.ReadyReplicas, d.Status.AvailableReplicas, d.Status.UnavailableReplicas = 3, 3, 0
	if _, err := r.client.AppsV1().Deployments(ns).UpdateStatus(context.Background(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := entriesWhen(r, "rollout", func(l []string) bool { return len(l) >= 4 }, timeline.KindRollout)
	equalLines(t, got, []string{
		"rollout web replicas=2 updated=2 ready=2 available=2",
		"rollout web replicas=3 updated=2 ready=2 available=2",
		"rollout web replicas=3 updated=3 ready=2 available=2",
		"rollout web replicas=3 updated=3 ready=3 available=3",
	})
	if g := r.tl.Filter(timeline.KindRollout)[1].Rollout.Generation; g != 2 {
		t.Fatalf("generation = %d", g)
	}
}
