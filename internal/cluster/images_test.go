package cluster

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeDocker puts a docker on PATH that has only the images named in have (and any a fake
// images.sh adds), answering inspect like the real one, and returns a kind that journals its loads
// to the returned file and the file listing the images docker has.
func fakeDocker(t *testing.T, have ...string) (kind, loads, haveFile string) {
	t.Helper()
	dir := t.TempDir()
	loads = filepath.Join(dir, "loads")
	haveFile = filepath.Join(dir, "have")
	if err := os.WriteFile(haveFile, []byte(strings.Join(have, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	docker := `#!/bin/sh
[ "$1 $2" = "image inspect" ] || exit 2
grep -qxF "$3" ` + haveFile + ` && { echo '[{}]'; exit 0; }
echo '[]'; echo "Error response from daemon: No such image: $3" >&2; exit 1
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
