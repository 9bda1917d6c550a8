package deploy

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/scenario"
)

// A fresh cluster has none of the images: toxiproxy must be loaded with the app's own whenever it
// is interposed on a dependency (a pull would go to a registry, which is never reachable).
func TestImagesToLoadIncludeTheInterposedToxiproxy(t *testing.T) {
	app := &App{Images: []string{"shop/web:1"}}
	if got := imagesToLoad(app); !slices.Equal(got, []string{"shop/web:1"}) {
		t.Errorf("no dependency: %v", got)
	}
	app.Dependencies = []AppDependency{{Dependency: scenario.Dependency{Name: "db"}}}
	if got := imagesToLoad(app); !slices.Equal(got, []string{"shop/web:1", DefaultToxiproxyImage}) {
		t.Errorf("with a dependency: %v", got)
	}
	if len(app.Images) != 1 {
		t.Errorf("the app's own list changed: %v", app.Images)
	}
}

func TestAcceptsWaitsForAListener(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + lis.Addr().String()
	if ok, note, err := accepts(url)(context.Background()); !ok || err != nil {
		t.Errorf("listening: ok %v, note %q, err %v", ok, note, err)
	}
	lis.Close()
	if ok, note, err := accepts(url)(context.Background()); ok || err != nil || !strings.Contains(note, "connect to") {
		t.Errorf("closed: ok %v, note %q, err %v", ok, note, err)
	}
}
