// Package testcluster gives integration tests the real kind cluster: Require skips under
// `go test -short`, otherwise creates or reuses the cluster (the same code path as `make cluster`)
// and fails the test clearly when it cannot.
package testcluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/probegate/probegate/internal/cluster"
)

// Env is the cluster a test runs against.
type Env struct {
	Cluster *cluster.Cluster
	Config  *rest.Config
	Client  kubernetes.Interface
}

var (
	once    sync.Once
	shared  *Env
	initErr error
)

// Require returns the shared cluster environment, creating the cluster if needed (once per test
// binary). It skips the test under -short.
func Require(t testing.TB) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the kind cluster (skipped with -short)")
	}
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
		defer cancel()
		c, err := cluster.Create(ctx, cluster.Options{})
		if err != nil {
			initErr = err
			return
		}
		cfg, err := c.RESTConfig()
		if err != nil {
			initErr = err
			return
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			initErr = err
			return
		}
		shared = &Env{Cluster: c, Config: cfg, Client: cs}
	})
	if initErr != nil {
		t.Fatalf("kind cluster unavailable: %v", initErr)
	}
	return shared
}

// Shared returns the environment Require made in this test binary, or nil before (or without) one:
// for a TestMain cleaning up what its tests shared.
func Shared() *Env {
	if initErr != nil {
		return nil
	}
	return shared
}

// Namespace creates a fresh namespace for the test and deletes it at cleanup (unless the test failed
// and PROBEGATE_KEEP_FAILED is set, to allow inspection).
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t-%s-%d", sanitize(t.Name()), time.Now().UnixNano()%100000)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"probegate.dev/test": "true"}}}
	if _, err := e.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		if t.Failed() && os.Getenv("PROBEGATE_KEEP_FAILED") != "" {
			t.Logf("keeping namespace %s for inspection", name)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = e.Client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	})
	return name
}

func sanitize(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 40 {
		out = strings.Trim(out[:40], "-")
	}
	return out
}
