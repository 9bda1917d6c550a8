package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeDocker puts a docker on PATH that has only the images named in have (and any a fake
// images.sh adds), answering inspect like the real one (fakeID), and returns a kind that journals its loads
// to the returned file and the file listing the images docker has.
func fakeDocker(t *testing.T, have ...string) (kind, loads, haveFile string) {
	t.Helper()
	dir := t.TempDir()
	loads = filepath.Join(dir, "loads")
	haveFile = filepath.Join(dir, "have")
	if err := os.WriteFile(haveFile, []byte(strings.Join(have, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// inspect -f {{.Id}} IMAGE prints the ID fakeID gives it.
	docker := `#!/bin/sh
[ "$1 $2" = "image inspect" ] || exit 2
for img; do :; done
grep -qxF "$img" ` + haveFile + ` && { echo "sha256:id-$img"; exit 0; }
echo '[]'; echo "Error response from daemon: No such image: $img" >&2; exit 1
`
	kind = filepath.Join(dir, "kind")
	for name, script := range map[string]string{"docker": docker, "kind": "#!/bin/sh\necho \"$@\" >>" + loads + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return kind, loads, haveFile
}

// fakeRoot is a source tree whose hack/images.sh journals its arguments and, when builds is true,
// "builds" each image named (every bundled one when none is) by adding probegate/NAME:dev to
// docker's list.
func fakeRoot(t *testing.T, haveFile string, builds bool) (journal string) {
	t.Helper()
	root := t.TempDir()
	journal = filepath.Join(root, "images.log")
	script := "#!/bin/sh\necho \"$@\" >>" + journal + "\n"
	if builds {
		script += "[ $# -gt 0 ] || set -- postgres toxiproxy target\nfor n in \"$@\"; do echo probegate/$n:dev >>" + haveFile + "; done\n"
	}
	for name, data := range map[string]string{"node-image.sh": "#!/bin/sh\n", "images.sh": script} {
		if err := os.MkdirAll(filepath.Join(root, "hack"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "hack", name), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PROBEGATE_ROOT", root)
	return journal
}

// resetRefresh lets a test see the once-per-process refresh again.
func resetRefresh(t *testing.T) {
	t.Helper()
	refresh.Once, refresh.err = sync.Once{}, nil
}

// Run where the bundled images were never built (an installed binary on a fresh machine), probegate
// builds the missing ones with hack/images.sh, once, and then loads them all.
func TestLoadImagesBuildsMissingBundledImages(t *testing.T) {
	kind, loads, haveFile := fakeDocker(t, "probegate/toxiproxy:dev")
	journal := fakeRoot(t, haveFile, true)
	resetRefresh(t)
	c := &Cluster{Name: "probegate", kind: kind, log: slog.New(slog.DiscardHandler)}
	if err := c.LoadImages(context.Background(), "probegate/postgres:dev", "probegate/toxiproxy:dev", "probegate/target:dev"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(journal); string(got) != "\n" {
		t.Errorf("images.sh ran with %q, want it run once with no arguments (every bundled image)", got)
	}
	if got, _ := os.ReadFile(loads); strings.Count(string(got), "load docker-image") != 3 {
		t.Errorf("kind calls:\n%s\nwant all three images loaded", got)
	}
	if err := c.LoadImages(context.Background(), "probegate/target:dev"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(journal); strings.Count(string(got), "\n") != 1 {
		t.Errorf("images.sh ran again in the same process: %q", got)
	}
}

// A build that leaves an image missing fails in one line, and nothing is loaded.
func TestLoadImagesFailsWhenTheBuildLeavesOneMissing(t *testing.T) {
	kind, loads, haveFile := fakeDocker(t, "probegate/toxiproxy:dev")
	fakeRoot(t, haveFile, false)
	resetRefresh(t)
	c := &Cluster{Name: "probegate", kind: kind, log: slog.New(slog.DiscardHandler)}
	err := c.LoadImages(context.Background(), "probegate/postgres:dev", "probegate/toxiproxy:dev")
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "probegate/postgres:dev") {
		t.Fatalf("err = %v, want one line naming the image still missing", err)
	}
	if _, serr := os.Stat(loads); !os.IsNotExist(serr) {
		t.Errorf("images were loaded although one is missing")
	}
}

func TestLoadImagesLoadsWhenEveryImageIsThere(t *testing.T) {
	kind, loads, haveFile := fakeDocker(t, "probegate/target:dev", "shop/web:1")
	fakeRoot(t, haveFile, false)
	resetRefresh(t)
	c := &Cluster{Name: "probegate", kind: kind}
	if err := c.LoadImages(context.Background(), "probegate/target:dev", "shop/web:1"); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(loads)
	if err != nil {
		t.Fatal(err)
	}
	want := "load docker-image --name probegate probegate/target:dev\nload docker-image --name probegate shop/web:1\n"
	if string(got) != want {
		t.Errorf("kind calls:\n%s\nwant:\n%s", got, want)
	}
	if err := c.LoadImages(context.Background(), "shop/api:2"); err == nil || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "--image shop/api:2=") {
		t.Errorf("a user's missing image: %v", err)
	}
}

// fakeID is the image ID fakeDocker's inspect prints for img.
func fakeID(img string) string { return "sha256:id-" + img }

// nodeImages fakes `docker exec NODE ctr -n k8s.io ...` for nodes holding images: node → containerd
// reference → the image ID its manifest's config names.
func nodeImages(t *testing.T, held map[string]map[string]string) func(context.Context, string, ...string) ([]byte, error) {
	return func(_ context.Context, node string, args ...string) ([]byte, error) {
		cmd := strings.Join(args, " ")
		switch {
		case cmd == "ctr -n k8s.io images ls":
			out := "REF TYPE DIGEST SIZE PLATFORMS LABELS\n"
			for ref := range held[node] {
				out += ref + " application/vnd.docker.distribution.manifest.v2+json sha256:m-" + node + "-" + ref + " 16.9 MiB linux/amd64 io.cri-containerd.image=managed\n"
			}
			return []byte(out), nil
		case strings.HasPrefix(cmd, "ctr -n k8s.io content get sha256:m-"+node+"-"):
			ref := strings.TrimPrefix(cmd, "ctr -n k8s.io content get sha256:m-"+node+"-")
			return []byte(`{"schemaVersion":2,"config":{"digest":"` + held[node][ref] + `"},"layers":[]}`), nil
		}
		t.Errorf("unexpected node command on %s: %s", node, cmd)
		return nil, fmt.Errorf("unexpected")
	}
}

// An image every node holds with the same ID is not loaded again (kind's own check needs crictl,
// which the node image lacks); one a node lacks, or holds with another ID, is.
func TestLoadImagesSkipsImagesEveryNodeHolds(t *testing.T) {
	kind, loads, haveFile := fakeDocker(t, "probegate/target:dev", "shop/web:1", "redis", "probegate/postgres:dev")
	fakeRoot(t, haveFile, false)
	resetRefresh(t)
	target, web, redis, pg := "docker.io/probegate/target:dev", "docker.io/shop/web:1", "docker.io/library/redis:latest", "docker.io/probegate/postgres:dev"
	c := &Cluster{Name: "probegate", kind: kind, log: slog.New(slog.DiscardHandler), Nodes: []string{"cp", "w1"},
		exec: nodeImages(t, map[string]map[string]string{
			"cp": {target: fakeID("probegate/target:dev"), web: fakeID("shop/web:1"), redis: fakeID("redis"), pg: "sha256:older"},
			"w1": {target: fakeID("probegate/target:dev"), redis: fakeID("redis"), pg: fakeID("probegate/postgres:dev")},
		})}
	if err := c.LoadImages(context.Background(), "probegate/target:dev", "shop/web:1", "redis", "probegate/postgres:dev"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(loads)
	want := "load docker-image --name probegate shop/web:1\nload docker-image --name probegate probegate/postgres:dev\n"
	if string(got) != want {
		t.Errorf("kind calls:\n%s\nwant:\n%s", got, want)
	}
}

func TestContainerdRef(t *testing.T) {
	for in, want := range map[string]string{
		"redis":                        "docker.io/library/redis:latest",
		"redis:7":                      "docker.io/library/redis:7",
		"probegate/target:dev":         "docker.io/probegate/target:dev",
		"shop/web":                     "docker.io/shop/web:latest",
		"registry.k8s.io/pause:3.10.1": "registry.k8s.io/pause:3.10.1",
		"localhost/app":                "localhost/app:latest",
		"localhost:5000/app:v1":        "localhost:5000/app:v1",
		"ghcr.io/org/team/app":         "ghcr.io/org/team/app:latest",
	} {
		if got, ok := containerdRef(in); !ok || got != want {
			t.Errorf("containerdRef(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := containerdRef("redis@sha256:abc"); ok {
		t.Error("a reference by digest must not be checked")
	}
}
