package runner

import (
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/seed"
	"github.com/probegate/probegate/internal/timeline"
)

// Faults that need cooperation the target does not offer are skipped with a note, not failed.
func TestFaultRegistrySkipsWithoutCooperation(t *testing.T) {
	env := faultEnv{
		Conn:     &cluster.Conn{Client: fake.NewClientset(), Config: &rest.Config{Host: "https://127.0.0.1:6443"}},
		Target:   &deploy.Target{Namespace: "ns", Selector: "app=x"}, // no admin port, no toxiproxy
		Timeline: timeline.New(time.Now()),
		Rand:     seed.New(1),
	}
	for typ, want := range map[string]string{
		"stall":      "no admin endpoint",
		"db-latency": "no toxiproxy",
		"db-down":    "no toxiproxy",
		"freeze":     "no access to the pod's node",
	} {
		inj, skip, err := faultRegistry{}.Build(scenario.Fault{Type: typ, Duration: time.Second}, env)
		if err != nil || inj != nil || !strings.Contains(skip, want) {
			t.Errorf("%s: injector %v, skip %q, err %v; want a skip naming %q", typ, inj, skip, err, want)
		}
	}
	env.Target.AdminPort = 9090
	inj, skip, err := faultRegistry{}.Build(scenario.Fault{Type: "stall", Duration: 5 * time.Second, Params: map[string]string{"pod": "random"}}, env)
	if err != nil || skip != "" || inj == nil {
		t.Fatalf("stall with an admin port: %v %q %v", inj, skip, err)
	}
}
