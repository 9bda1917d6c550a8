package observers

import (
	"context"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate/internal/timeline"
)

func updateSlice(t *testing.T, r *rig, s *discoveryv1.EndpointSlice) {
	t.Helper()
	if _, err := r.client.DiscoveryV1().EndpointSlices(ns).Update(context.Background(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createSlice(t *testing.T, r *rig, s *discoveryv1.EndpointSlice) {
	t.Helper()
	if _, err := r.client.DiscoveryV1().EndpointSlices(ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func endpointsWhen(r *rig, n int) []string {
	es := r.waitFor("endpoint entries", func(es []timeline.Entry) bool {
		return len(kinds(es, timeline.KindEndpoint)) >= n
	})
	return kinds(es, timeline.KindEndpoint)
}

func TestEndpointLifecycleWithNilConditions(t *testing.T) {
	// Initial state: nil conditions mean ready and serving, not terminating.
	r := newRig(t, Options{Service: "web"}, slice("web-abc", ep("p1", "10.0.0.1", nil, nil, nil)))
	// Another Service's slice is ignored.
	other := slice("api-xyz", ep("q1", "10.0.0.9", nil, nil, nil))
	other.Labels[discoveryv1.LabelServiceName] = "api"
	createSlice(t, r, other)

	updateSlice(t, r, slice("web-abc", ep("p1", "10.0.0.1", ptr(false), ptr(true), ptr(true))))
	updateSlice(t, r, slice("web-abc", ep("p1", "10.0.0.1", ptr(false), ptr(false), ptr(true))))
	updateSlice(t, r, slice("web-abc"))
	got := endpointsWhen(r, 4)
	equalLines(t, got, []string{
		"endpoint added p1 10.0.0.1 none->RS",
		"endpoint changed p1 10.0.0.1 RS->ST",
		"endpoint changed p1 10.0.0.1 ST->T",
		"endpoint removed p1 10.0.0.1 T->none",
	})
	// An update that changes nothing about the endpoints writes nothing.
	s := slice("web-abc", ep("p2", "10.0.0.2", nil, nil, nil))
	updateSlice(t, r, s)
	s.Labels["touched"] = "yes"
	updateSlice(t, r, s)
	got = endpointsWhen(r, 5)
	time.Sleep(150 * time.Millisecond)
	if n := len(kinds(r.tl.Entries(), timeline.KindEndpoint)); n != 5 {
		t.Fatalf("%d endpoint entries after a no-op update, want 5:\n%s", n, dump(r.tl.Entries()))
	}
	if got[4] != "endpoint added p2 10.0.0.2 none->RS" {
		t.Fatalf("entry 5 = %q", got[4])
	}
	es := r.tl.Filter(timeline.KindEndpoint)
	if es[0].Endpoint.Slice != "web-abc" || es[0].Endpoint.Node != "node" || es[0].Pod != "p1" {
		t.Fatalf("entry lacks slice/node/pod: %+v", es[0].Endpoint)
	}
	for i := 1; i < len(es); i++ {
		if es[i].T < es[i-1].T {
			t.Fatalf("entries out of order")
		}
	}
}

func TestEndpointMovingBetweenSlicesIsNotRemovedAndAdded(t *testing.T) {
	// A long MoveWindow so that a slow (loaded) machine cannot turn the reverse-order move into a
	// removal; the final removals wait it out.
	r := newRig(t, Options{Service: "web", MoveWindow: time.Second},
		slice("web-a", ep("p1", "10.0.0.1", nil, nil, nil), ep("p2", "10.0.0.2", nil, nil, nil)),
	)
	endpointsWhen(r, 2)

	// Controller order: the endpoint shows up in the new slice first, then leaves the old one.
	createSlice(t, r, slice("web-b", ep("p1", "10.0.0.1", nil, nil, nil)))
	updateSlice(t, r, slice("web-a", ep("p2", "10.0.0.2", nil, nil, nil)))
	// Reverse order: p2 leaves web-a first and shows up in web-b within MoveWindow.
	updateSlice(t, r, slice("web-a"))
	time.Sleep(20 * time.Millisecond)
	updateSlice(t, r, slice("web-b", ep("p1", "10.0.0.1", nil, nil, nil), ep("p2", "10.0.0.2", ptr(false), nil, nil)))
	// A move that also changes conditions is one "changed"; then a real removal.
	got := endpointsWhen(r, 3)
	if err := r.client.DiscoveryV1().EndpointSlices(ns).Delete(context.Background(), "web-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got = endpointsWhen(r, 5)
	time.Sleep(200 * time.Millisecond)
	got = kinds(r.tl.Entries(), timeline.KindEndpoint)
	equalLines(t, got[:3], []string{
		"endpoint added p1 10.0.0.1 none->RS",
		"endpoint added p2 10.0.0.2 none->RS",
		"endpoint changed p2 10.0.0.2 RS->S",
	})
	// The two removals come from one slice deletion; their relative order is not defined.
	if len(got) != 5 || !hasLine(got[3:], "endpoint removed p1 10.0.0.1 RS->none") || !hasLine(got[3:], "endpoint removed p2 10.0.0.2 S->none") {
		t.Fatalf("removals wrong:\n%s", dump(r.tl.Entries()))
	}
	for _, e := range r.tl.Filter(timeline.KindEndpoint)[3:] {
		if e.Endpoint.Slice != "web-b" {
			t.Fatalf("removal names slice %q, want web-b", e.Endpoint.Slice)
		}
	}
}

func TestEndpointRemovalHeldBackKeepsItsReceiveTime(t *testing.T) {
	r := newRig(t, Options{Service: "web", MoveWindow: 300 * time.Millisecond}, slice("web-a", ep("p1", "10.0.0.1", nil, nil, nil)))
	endpointsWhen(r, 1)
	before := r.tl.Since(time.Now())
	updateSlice(t, r, slice("web-a"))
	got := endpointsWhen(r, 2)
	seen := r.tl.Since(time.Now())
	if got[1] != "endpoint removed p1 10.0.0.1 RS->none" {
		t.Fatalf("got %q", got[1])
	}
	// The entry is written MoveWindow after the slice update arrived, but carries the arrival time.
	e := r.tl.Filter(timeline.KindEndpoint)[1]
	if e.T < before || seen-e.T < 290*time.Millisecond {
		t.Fatalf("removal T = %v (update sent at %v, entry seen at %v): want the receive time, held back by MoveWindow", e.T, before, seen)
	}
}

func TestStopFlushesHeldRemovals(t *testing.T) {
	r := newRig(t, Options{Service: "web", MoveWindow: time.Hour}, slice("web-a", ep("p1", "10.0.0.1", nil, nil, nil)))
	endpointsWhen(r, 1)
	updateSlice(t, r, slice("web-a"))
	// Until the observer holds the removal (a fixed sleep lost the update on a loaded host).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		x := r.obs.endpoints
		x.mu.Lock()
		held := len(x.pending)
		x.mu.Unlock()
		if held == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the removal never reached the observer (%d held)", held)
		}
	}
	if n := len(r.tl.Filter(timeline.KindEndpoint)); n != 1 {
		t.Fatalf("removal written before MoveWindow: %d entries", n)
	}
	r.obs.Stop()
	got := kinds(r.tl.Entries(), timeline.KindEndpoint)
	equalLines(t, got, []string{"endpoint added p1 10.0.0.1 none->RS", "endpoint removed p1 10.0.0.1 RS->none"})
}
