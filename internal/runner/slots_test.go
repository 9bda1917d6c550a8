package runner

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/probegate/probegate/internal/cluster"
)

// Slots used by another process's Services on the cluster are skipped; Width bounds this
// process's claims and Release frees a slot for a waiting Acquire.
func TestSlotPool(t *testing.T) {
	busy := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "toxiproxy-api", Namespace: "other"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8474, NodePort: cluster.ToxiproxyNodePort(0)}}}}
	p := &slotPool{Client: fake.NewClientset(busy), Slots: 4, Width: 2, Poll: 10 * time.Millisecond,
		TargetPort: cluster.TargetNodePort, ToxiproxyPort: cluster.ToxiproxyNodePort}
	ctx := context.Background()
	a, err := p.Acquire(ctx)
	if err != nil || a != 1 {
		t.Fatalf("first slot = %d, %v; want 1 (0 is used on the cluster)", a, err)
	}
	b, _ := p.Acquire(ctx)
	if b != 2 {
		t.Fatalf("second slot = %d, want 2", b)
	}
	if s := acquireAfter(t, p, func() { p.Release(a) }, "beyond Width 2"); s != 1 {
		t.Fatalf("after release got slot %d, want 1", s)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.Acquire(cctx); err == nil {
		t.Fatalf("Acquire on a cancelled context with no free slot succeeded")
	}
}

// acquireAfter starts an Acquire on p that must wait (failing the test, saying the slot was handed
// out how, when it does not), calls release, and returns the slot the Acquire then got.
func acquireAfter(t *testing.T, p *slotPool, release func(), how string) int {
	t.Helper()
	got := make(chan int)
	go func() {
		s, _ := p.Acquire(context.Background())
		got <- s
	}()
	select {
	case s := <-got:
		t.Fatalf("slot %d was handed out %s", s, how)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	return <-got
}

// Two processes sharing the cluster both see a slot free until one has created its Services; the
// lock file makes the second pass it over (two pools here: flock locks conflict per open file), and
// gives it back when the first releases it.
func TestSlotPoolLocksAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	pool := func() *slotPool {
		return &slotPool{Client: fake.NewClientset(), Slots: 2, Poll: 10 * time.Millisecond, LockDir: dir, LockName: "kind",
			TargetPort: cluster.TargetNodePort, ToxiproxyPort: cluster.ToxiproxyNodePort}
	}
	a, b := pool(), pool()
	ctx := context.Background()
	sa, err := a.Acquire(ctx)
	if err != nil || sa != 0 {
		t.Fatalf("first process: slot %d, %v; want 0", sa, err)
	}
	sb, err := b.Acquire(ctx)
	if err != nil || sb != 1 {
		t.Fatalf("second process: slot %d, %v; want 1 (0 is locked by the first)", sb, err)
	}
	if s := acquireAfter(t, b, func() { a.Release(sa) }, "by the second process while both were held"); s != 0 {
		t.Fatalf("after the first released slot 0 the second got %d", s)
	}
	if slotLockName("kind/a b") != "kind_a_b" || slotLockName("") != "cluster" {
		t.Errorf("slotLockName: %q %q", slotLockName("kind/a b"), slotLockName(""))
	}
}

// A lock file that cannot be made (another user's cache; here the lock directory is a file) turns
// the locks off rather than failing every run.
func TestSlotPoolWithoutUsableLockDir(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p := &slotPool{Client: fake.NewClientset(), Slots: 2, LockDir: filepath.Join(notDir, "slots"), LockName: "kind",
		TargetPort: cluster.TargetNodePort, ToxiproxyPort: cluster.ToxiproxyNodePort}
	for want := range 2 {
		if s, err := p.Acquire(context.Background()); err != nil || s != want {
			t.Fatalf("slot %d, %v; want %d with the locks off", s, err, want)
		}
	}
}

// A wait on slots held outside the pool says who holds them, once each time that changes, and the
// error of a wait given up names them too.
func TestSlotPoolSaysWhoHolds(t *testing.T) {
	svc := func(ns string, port int32) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "target", Namespace: ns},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, NodePort: port}}}}
	}
	var logged bytes.Buffer
	p := &slotPool{Client: fake.NewClientset(svc("pg-left-over", cluster.TargetNodePort(0)), svc("pg-other", cluster.ToxiproxyNodePort(1))),
		Slots: 2, Width: 1, Poll: 5 * time.Millisecond, TargetPort: cluster.TargetNodePort, ToxiproxyPort: cluster.ToxiproxyNodePort,
		Log: slog.New(slog.NewTextHandler(&logged, nil))}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := p.Acquire(ctx)
	if err == nil {
		t.Fatal("Acquire got a slot though both are held on the cluster")
	}
	const held = "namespace pg-left-over, namespace pg-other"
	if !strings.Contains(err.Error(), held) {
		t.Errorf("the error %q does not name who holds the slots (%s)", err, held)
	}
	if n := strings.Count(logged.String(), "waiting for a free port slot"); n != 1 {
		t.Errorf("the wait was logged %d times, want once (the holders did not change):\n%s", n, logged.String())
	}
	if !strings.Contains(logged.String(), held) {
		t.Errorf("the log does not name who holds the slots:\n%s", logged.String())
	}
}
