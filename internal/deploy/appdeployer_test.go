package deploy

import (
	"slices"
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
