package observers

import (
	"testing"

	"github.com/probegate/probegate/internal/timeline"
)

func TestIncarnationsKeyByUID(t *testing.T) {
	var in incarnations
	if got := in.key("web-1", ""); got != "web-1" {
		t.Errorf("no UID, nothing seen: %q", got)
	}
	a := in.key("web-1", "uid-a")
	b := in.key("web-1", "uid-b")
	if a != "web-1" || b != timeline.Incarnation("web-1", 2) {
		t.Fatalf("keys %q, %q: want the name, then its second incarnation", a, b)
	}
	if again := in.key("web-1", "uid-a"); again != a {
		t.Errorf("the old pod's late entry is keyed %q, want %q", again, a)
	}
	if latest := in.key("web-1", ""); latest != b {
		t.Errorf("a reference without a UID names %q, want the latest %q", latest, b)
	}
	if other := in.key("web-0", "uid-c"); other != "web-0" {
		t.Errorf("another name: %q", other)
	}
}
