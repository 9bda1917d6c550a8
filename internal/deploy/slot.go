package deploy

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/cluster"
)

// FreeSlot returns the highest port slot whose target and toxiproxy NodePorts no Service in the
// cluster uses (highest first, so ad-hoc runs on slot 0 and tests stay apart). Concurrent callers
// can still race for a slot; Install then fails clearly on the NodePort allocation.
func FreeSlot(ctx context.Context, client kubernetes.Interface) (int, error) {
	svcs, err := client.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("find a free port slot: list services: %w", err)
	}
	used := map[int32]bool{}
	for _, s := range svcs.Items {
		for _, p := range s.Spec.Ports {
			used[p.NodePort] = true
		}
	}
	for slot := cluster.Slots - 1; slot >= 0; slot-- {
		if !used[cluster.TargetNodePort(slot)] && !used[cluster.ToxiproxyNodePort(slot)] {
			return slot, nil
		}
	}
	return 0, fmt.Errorf("find a free port slot: all %d slots are in use", cluster.Slots)
}
