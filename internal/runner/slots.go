package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/pause"
)

// slotPool hands out the cluster's port slots (a target NodePort and a toxiproxy NodePort each).
// A slot is free when this process has not claimed it and no Service on the cluster uses either of
// its NodePorts, so runs of other processes sharing the cluster are respected too.
type slotPool struct {
	Client kubernetes.Interface
	// Slots is the number of slots; Width caps how many this pool hands out at once.
	Slots, Width int
	// TargetPort and ToxiproxyPort give a slot's NodePorts.
	TargetPort, ToxiproxyPort func(slot int) int32
	// Poll is how often a waiting Acquire looks again (2 s when 0).
	Poll time.Duration

	mu      sync.Mutex
	claimed map[int]bool
}

// Acquire waits for a free slot and claims it.
func (p *slotPool) Acquire(ctx context.Context) (int, error) {
	poll := p.Poll
	if poll == 0 {
		poll = 2 * time.Second
	}
	for {
		slot, err := p.try(ctx)
		if err != nil || slot >= 0 {
			return slot, err
		}
		if pause.For(ctx, poll) != nil {
			return 0, fmt.Errorf("wait for a free port slot: %w", context.Cause(ctx))
		}
	}
}

func (p *slotPool) try(ctx context.Context) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.claimed == nil {
		p.claimed = map[int]bool{}
	}
	if p.Width > 0 && len(p.claimed) >= p.Width {
		return -1, nil
	}
	used := map[int32]bool{}
	if p.Client != nil {
		svcs, err := p.Client.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, fmt.Errorf("find a free port slot: list services: %w", err)
		}
		for _, s := range svcs.Items {
			for _, port := range s.Spec.Ports {
				used[port.NodePort] = true
			}
		}
	}
	for slot := 0; slot < p.Slots; slot++ {
		if p.claimed[slot] || used[p.TargetPort(slot)] || used[p.ToxiproxyPort(slot)] {
			continue
		}
		p.claimed[slot] = true
		return slot, nil
	}
	return -1, nil
}

// Release gives a slot back.
func (p *slotPool) Release(slot int) {
	p.mu.Lock()
	delete(p.claimed, slot)
	p.mu.Unlock()
}
