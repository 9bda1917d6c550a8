package testcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/cluster"
)

// GoImage builds the Go main package pkg (a path relative to the repository root, such as
// "./internal/cluster/testdata/smokeserver") into a static binary, wraps it in a FROM scratch image
// named name:<content hash>, loads it into the cluster and returns the image reference. Nothing
// is pulled.
func (e *Env) GoImage(t testing.TB, pkg, name string) string {
	t.Helper()
	root, err := cluster.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "app")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, pkg)
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	ref := fmt.Sprintf("%s:%s", name, hex.EncodeToString(sum[:])[:12])
	if err := exec.CommandContext(ctx, "docker", "image", "inspect", ref).Run(); err != nil {
		dockerfile := "FROM scratch\nCOPY app /app\nENTRYPOINT [\"/app\"]\n"
		if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.CommandContext(ctx, "docker", "build", "-q", "-t", ref, dir).CombinedOutput(); err != nil {
			t.Fatalf("docker build %s: %v\n%s", ref, err, out)
		}
	}
	if err := e.Cluster.LoadImages(ctx, ref); err != nil {
		t.Fatal(err)
	}
	return ref
}
