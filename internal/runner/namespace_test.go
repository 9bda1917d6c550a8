package runner

import (
	"context"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/probegate/probegate/internal/cluster"
)

// A run's port slot is free once its namespace is being deleted, not once the namespace controller
// has got round to its Services (seconds later on a busy host, after the pods): the teardown
// deletes the Services itself, and the next Acquire finds the slot free at once.
func TestDeleteNamespaceFreesTheSlotAtOnce(t *testing.T) {
	const ns = "pg-overload-abcdef"
	nodePort := func(name string, port int32) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: port}}}}
	}
	// The fake never finalises a namespace: its Services stay unless deleted one by one.
	cs := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		nodePort("target", cluster.TargetNodePort(0)), nodePort("toxiproxy", cluster.ToxiproxyNodePort(0)))
	r := &Runner{Conn: &cluster.Conn{Client: cs}}
	pool := &slotPool{Client: cs, Slots: 1, TargetPort: cluster.TargetNodePort, ToxiproxyPort: cluster.ToxiproxyNodePort}
	if slot, _, err := pool.try(context.Background()); err != nil || slot != -1 {
		t.Fatalf("with the run's Services up, try = %d, %v; want no free slot", slot, err)
	}
	r.deleteNamespace(ns, slog.New(slog.DiscardHandler))
	if slot, _, err := pool.try(context.Background()); err != nil || slot != 0 {
		t.Fatalf("after the teardown, try = %d, %v; want slot 0 free", slot, err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); err == nil {
		t.Fatal("the namespace was not deleted")
	}
}
