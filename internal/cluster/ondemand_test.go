package cluster

import "testing"

func TestOnDemandImage(t *testing.T) {
	for img, want := range map[string]string{
		"probegate/traefik:dev": "traefik", "probegate/traefik:0123abcd": "traefik", "probegate/target:dev": "",
		"traefik:v3": "", "example.com/probegate/traefik:dev": "",
	} {
		got, ok := onDemandImage(img)
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q, %v; want %q", img, got, ok, want)
		}
	}
}
