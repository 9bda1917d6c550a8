package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeDocker puts a docker on PATH that has only the images named in have, answering inspect like
// the real one, and returns a kind that journals its loads to the returned file.
func fakeDocker(t *testing.T, have ...string) (kind, loads string) {
	t.Helper()
	dir := t.TempDir()
	loads = filepath.Join(dir, "loads")
	docker := `#!/bin/sh
[ "$1 $2" = "image inspect" ] || exit 2
for img in ` + strings.Join(have, " ") + `; do [ "$img" = "$3" ] && { echo '[{}]'; exit 0; }; done
echo '[]'; echo "Error response from daemon: No such image: $3" >&2; exit 1
`
	kind = filepath.Join(dir, "kind")
	for name, script := range map[string]string{"docker": docker, "kind": "#!/bin/sh\necho \"$@\" >>" + loads + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return kind, loads
}

// Run outside a checkout on a machine that never built the bundled images, probegate says in one
// line which are missing and what to run, and loads nothing.
func TestLoadImagesNamesEveryUnbuiltImageInOneLine(t *testing.T) {
	kind, loads := fakeDocker(t, "probegate/toxiproxy:dev")
	c := &Cluster{Name: "probegate", kind: kind}
	err := c.LoadImages(context.Background(), "probegate/postgres:dev", "probegate/toxiproxy:dev", "probegate/target:dev")
	want := "the bundled images probegate/postgres:dev, probegate/target:dev are not built: run `make images` in a probegate checkout (it builds them from source once), then run probegate again"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if _, serr := os.Stat(loads); !os.IsNotExist(serr) {
		t.Errorf("images were loaded before the missing ones were reported")
	}
}

func TestLoadImagesLoadsWhenEveryImageIsThere(t *testing.T) {
	kind, loads := fakeDocker(t, "probegate/target:dev", "shop/web:1")
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
