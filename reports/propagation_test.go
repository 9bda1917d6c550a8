package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func TestPropagationPerNode(t *testing.T) {
	const s = time.Second
	ep := func(t time.Duration, pod string, ready bool) timeline.Entry {
		return timeline.Entry{T: t, Kind: timeline.KindEndpoint, Pod: pod, Endpoint: &timeline.EndpointTransition{
			Change: timeline.EndpointChanged, Address: "10.0.0." + pod, To: &timeline.EndpointState{Ready: ready, Serving: ready}}}
	}
	unrouted := func(t time.Duration, pod, node string, ingress bool) timeline.Entry {
		return timeline.Entry{T: t, Kind: timeline.KindRouting, Pod: pod, Routing: &timeline.RoutingChange{
			Address: "10.0.0." + pod, Node: node, Ingress: ingress}}
	}
	entries := []timeline.Entry{
		ep(0, "a", true), ep(0, "b", true),
		ep(10*s, "a", false), unrouted(10*s+500*time.Millisecond, "a", "cp", true), unrouted(13*s, "a", "w1", false),
		ep(20*s, "b", false), unrouted(20*s+200*time.Millisecond, "b", "cp", true), // w1 never follows b
	}
	got := propagation(entries)
	if len(got) != 2 {
		t.Fatalf("got %+v, want two nodes", got)
	}
	cp, w1 := got[0], got[1]
	if cp.Node != "cp" || !cp.Ingress || cp.Withdrawals != 2 || cp.Missed != 0 || cp.Max != 500*time.Millisecond || cp.Median != 500*time.Millisecond {
		t.Errorf("cp: %+v", cp)
	}
	if w1.Node != "w1" || w1.Ingress || w1.Withdrawals != 1 || w1.Missed != 1 || w1.Max != 3*s {
		t.Errorf("w1: %+v", w1)
	}
	line := propagationLine(got)
	for _, want := range []string{"cp (ingress) median 500 ms", "w1 median 3000 ms max 3000 ms over 1, 1 not followed"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
	if propagation(entries[:5]) == nil || propagation(entries[:2]) != nil {
		t.Error("want figures only when there are routing entries and withdrawals")
	}
}
