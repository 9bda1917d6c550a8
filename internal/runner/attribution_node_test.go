package runner

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/observers/conntrack"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIngressNode(t *testing.T) {
	n := func(name string, cp bool) corev1.Node {
		node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		if cp {
			node.Labels["node-role.kubernetes.io/control-plane"] = ""
		}
		return node
	}
	three := []corev1.Node{n("pg-worker", false), n("pg-control-plane", true), n("pg-worker2", false)}
	for _, tc := range []struct {
		nodes      []corev1.Node
		name, want string // want "" : an error
	}{
		{three, "pg-control-plane", "pg-control-plane"},
		{three, "", "pg-control-plane"},
		{three, "pg-worker2", "pg-worker2"},
		{three, "elsewhere", ""},
		{[]corev1.Node{n("solo", false)}, "", "solo"},
		{[]corev1.Node{n("a", false), n("b", false)}, "", ""},
		{[]corev1.Node{n("a", true), n("b", true)}, "", ""},
	} {
		got, err := ingressNode(tc.nodes, tc.name)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%q: chose %s, want an error", tc.name, got.Name)
		case tc.want != "" && (err != nil || got.Name != tc.want):
			t.Errorf("%q: %v, %v; want %s", tc.name, got, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%q: error of more than one line: %v", tc.name, err)
		}
	}
}

// listed is a flowLister with a fixed conntrack listing.
type listed []conntrack.Flow

func (l listed) List(context.Context) ([]conntrack.Flow, error) { return l, nil }

// keptLoad is a running load whose requests so far are fixed.
type keptLoad struct {
	kept
	rate float64
}

func (k *keptLoad) SetRate(r float64) float64         { prev := k.rate; k.rate = r; return prev }
func (k *keptLoad) Wait() ([]timeline.Request, error) { return k.all(), nil }
func (k *keptLoad) Stop()                             {}

// TestLiveTallyRanksPodsByConntrack: an app with no pod header names no pod in its requests, so
// "busiest" used to draw at random; the live tally attributes the requests so far to the flows
// the node lists now and ranks the pods by them.
func TestLiveTallyRanksPodsByConntrack(t *testing.T) {
	tl := timeline.New(time.Now())
	tl.Append(timeline.Entry{Kind: timeline.KindEndpoint, Pod: "etcd-0", Endpoint: &timeline.EndpointTransition{Address: "10.244.0.5"}})
	tl.Append(timeline.Entry{Kind: timeline.KindEndpoint, Pod: "etcd-1", Endpoint: &timeline.EndpointTransition{Address: "10.244.0.6"}})
	load := &keptLoad{}
	for i, conn := range []string{"172.29.0.1:40000", "172.29.0.1:40000", "172.29.0.1:40000", "172.29.0.1:40001"} {
		load.add(timeline.Request{Seq: uint64(i), Start: time.Now(), ConnAt: time.Now(), Status: 200, Conn: conn})
	}
	flow := func(client, backend string) conntrack.Flow {
		return conntrack.Flow{Client: netip.MustParseAddrPort(client), Service: netip.MustParseAddrPort("172.29.0.2:30080"), Backend: netip.MustParseAddrPort(backend)}
	}
	tally := liveTally{loadRun: load, flows: listed{flow("172.29.0.1:40000", "10.244.0.6:2379"), flow("172.29.0.1:40001", "10.244.0.5:2379")}, tl: tl, log: slog.New(slog.DiscardHandler)}
	if got := tally.ServedBy(); got["etcd-1"] != 3 || got["etcd-0"] != 1 {
		t.Fatalf("ServedBy = %v, want etcd-1 3 and etcd-0 1 (by conntrack)", got)
	}
	// Requests that name their pod (a pod header) are counted as they are.
	named := &keptLoad{}
	named.add(timeline.Request{Status: 200, Pod: "etcd-0", PodFrom: timeline.PodFromHeader})
	if got := (liveTally{loadRun: named, flows: listed{}, tl: tl}).ServedBy(); got["etcd-0"] != 1 || len(got) != 1 {
		t.Errorf("ServedBy with a header = %v", got)
	}
	// The overload's proof still reads a metered load's counts through the wrapper.
	if _, ok := tallied(&vegetaRun{}, &connAttribution{}, tl).(faults.LoadMeter); !ok {
		t.Error("the tallied HTTP load hides its counts from the overload fault")
	}
}
