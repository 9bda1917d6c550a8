package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/pause"
)

// slotPool hands out the cluster's port slots (a target NodePort and a toxiproxy NodePort each).
// A slot is free when this process has not claimed it and no Service on the cluster uses either of
// its NodePorts, so runs of other processes sharing the cluster are respected too. Two processes
// choosing at once both see a slot free until one has created its Services; with LockDir, a slot
// is also held by an exclusive lock on a file there (released when the slot is, or when the
// process ends), so processes on this host never take the same slot.
type slotPool struct {
	Client kubernetes.Interface
	// Slots is the number of slots; Width caps how many this pool hands out at once.
	Slots, Width int
	// TargetPort and ToxiproxyPort give a slot's NodePorts.
	TargetPort, ToxiproxyPort func(slot int) int32
	// Poll is how often a waiting Acquire looks again (2 s when 0).
	Poll time.Duration
	// LockDir holds the slots' lock files, LockName-N.lock ("" for no lock files).
	LockDir, LockName string
	// Log hears, while Acquire waits on slots held outside this pool, who holds them (each time
	// that changes); nil for silence.
	Log *slog.Logger

	mu      sync.Mutex
	claimed map[int]*os.File // a claimed slot's lock file (nil without LockDir)
}

// Acquire waits for a free slot and claims it.
func (p *slotPool) Acquire(ctx context.Context) (int, error) {
	poll := p.Poll
	if poll == 0 {
		poll = 2 * time.Second
	}
	said := ""
	for {
		slot, held, err := p.try(ctx)
		if err != nil || slot >= 0 {
			return slot, err
		}
		if held != "" && held != said && p.Log != nil {
			p.Log.Info("waiting for a free port slot: every slot this run may take is held outside it", "held-by", held)
		}
		said = held
		if pause.For(ctx, poll) != nil {
			if held != "" {
				return 0, fmt.Errorf("wait for a free port slot (held by %s): %w", held, context.Cause(ctx))
			}
			return 0, fmt.Errorf("wait for a free port slot: %w", context.Cause(ctx))
		}
	}
}

// try claims a free slot (-1 when none is). When none is and this pool is below Width, held says
// who holds the slots: the namespaces whose Services use their NodePorts, and the slots whose
// lock another process on this host has.
func (p *slotPool) try(ctx context.Context) (slot int, held string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.claimed == nil {
		p.claimed = map[int]*os.File{}
	}
	if p.Width > 0 && len(p.claimed) >= p.Width {
		return -1, "", nil
	}
	used := map[int32]string{} // NodePort → the namespace of the Service using it
	if p.Client != nil {
		svcs, err := p.Client.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, "", fmt.Errorf("find a free port slot: list services: %w", err)
		}
		for _, s := range svcs.Items {
			for _, port := range s.Spec.Ports {
				if port.NodePort != 0 {
					used[port.NodePort] = s.Namespace
				}
			}
		}
	}
	var holders []string
	locked := 0
	for slot := 0; slot < p.Slots; slot++ {
		if _, mine := p.claimed[slot]; mine {
			continue
		}
		ns, inUse := used[p.TargetPort(slot)]
		if !inUse {
			ns, inUse = used[p.ToxiproxyPort(slot)]
		}
		if inUse {
			holders = append(holders, "namespace "+ns)
			continue
		}
		f, err := p.lock(slot)
		if err != nil {
			return 0, "", err
		}
		if f == nil && p.LockDir != "" {
			locked++ // another process on this host holds it
			continue
		}
		p.claimed[slot] = f
		return slot, "", nil
	}
	slices.Sort(holders)
	holders = slices.Compact(holders)
	if locked > 0 {
		holders = append(holders, fmt.Sprintf("another probegate on this host (%d slot lock(s))", locked))
	}
	return -1, strings.Join(holders, ", "), nil
}

// lock takes slot's lock file without waiting: the open file while held, nil when another process
// holds it (or without LockDir). A lock file that cannot be made (a --kubeconfig run by another
// user than the one who owns the local cluster's cache, a read-only cache) turns the locks off for
// this pool: the Services on the cluster still decide, as before there were locks.
func (p *slotPool) lock(slot int) (*os.File, error) {
	if p.LockDir == "" {
		return nil, nil
	}
	path := filepath.Join(p.LockDir, fmt.Sprintf("%s-%d.lock", p.LockName, slot))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil && errors.Is(err, fs.ErrNotExist) && os.MkdirAll(p.LockDir, 0o755) == nil {
		f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	}
	if err != nil {
		p.LockDir = ""
		return nil, nil
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("port slot lock %s: %w", path, err)
	}
	return f, nil
}

// Release gives a slot back.
func (p *slotPool) Release(slot int) {
	p.mu.Lock()
	if f := p.claimed[slot]; f != nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
	delete(p.claimed, slot)
	p.mu.Unlock()
}
