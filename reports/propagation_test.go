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
	got := propagation(entries, nil)
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
	if propagation(entries[:5], nil) == nil || propagation(entries[:2], nil) != nil {
		t.Error("want figures only when there are routing entries and withdrawals")
	}

	// Issue #31: the ingress node's kernel DNAT'd a new connection to a after its rules read (10.5 s),
	// opened at 11.2 s: the lag counted is the kernel's, and the line says so. A connection opened
	// before the read, or a reused one, or one to another pod, changes nothing.
	t0 := time.Unix(1_800_000_000, 0)
	conn := func(opened time.Duration, pod string, reused bool) timeline.Request {
		return timeline.Request{T: opened, Start: t0.Add(opened), ConnAt: t0.Add(opened), FlowAt: t0.Add(opened + time.Millisecond),
			Pod: pod, PodFrom: timeline.PodFromConntrack, Status: 200, Reused: reused}
	}
	reqs := []timeline.Request{conn(10*s+400*time.Millisecond, "a", false), conn(11*s+200*time.Millisecond, "a", false),
		conn(12*s, "a", true), conn(12*s, "b", false)}
	got = propagation(entries, reqs)
	if cp := got[0]; cp.KernelLater != 1 || cp.Max != 1200*time.Millisecond || got[1].KernelLater != 0 {
		t.Errorf("with the kernel's routing: %+v", got)
	}
	if line := propagationLine(got); !strings.Contains(line, "max 1200 ms over 2, 1 later than its rules showed (the kernel's own routing, conntrack)") {
		t.Errorf("line %q", line)
	}
}

// TestDoorPropagation: through an ingress controller, the lag is the last request the controller
// sent a withdrawn pod (its record's upstream) after the withdrawal; requests before it, to other
// pods, or not through the door do not count.
func TestDoorPropagation(t *testing.T) {
	const s = time.Second
	ep := func(t time.Duration, pod string, ready bool) timeline.Entry {
		return timeline.Entry{T: t, Kind: timeline.KindEndpoint, Pod: pod, Endpoint: &timeline.EndpointTransition{
			Change: timeline.EndpointChanged, Address: "10.0.0." + pod, To: &timeline.EndpointState{Ready: ready, Serving: ready}}}
	}
	entries := []timeline.Entry{ep(0, "a", true), ep(0, "b", true), ep(10*s, "a", false), ep(20*s, "b", false)}
	door := func(at time.Duration, pod string) timeline.Request {
		return timeline.Request{T: at, Pod: pod, Upstream: "10.0.0." + pod + ":8080", Status: 200}
	}
	reqs := []timeline.Request{
		door(9*s, "a"), door(10*s+300*time.Millisecond, "a"), door(11*s+500*time.Millisecond, "a"), // a: 1.5 s late, 2 requests
		door(12*s, "b"), {T: 21 * s, Pod: "b", Status: 200}, // b: none through the door after 20 s
	}
	got := doorPropagation(entries, reqs)
	if got == nil || got.Withdrawals != 2 || got.Late != 1 || got.Requests != 2 || got.Max != 1500*time.Millisecond || got.Median != 1500*time.Millisecond {
		t.Fatalf("door propagation %+v", got)
	}
	if line := doorLine(got); !strings.Contains(line, "median 1500 ms max 1500 ms after it, over 2 withdrawals (2 requests sent to a withdrawn pod, after 1 of them)") {
		t.Errorf("line %q", line)
	}
	var plain []timeline.Request
	for _, q := range reqs {
		q.Upstream = ""
		plain = append(plain, q)
	}
	if doorPropagation(entries, plain) != nil || doorLine(nil) != "" {
		t.Error("want no door figures when no request went through a door's record")
	}
}

// TestSliceLag: the first hop is from the pod's own change (a container's readiness false, or the
// deletion) to the endpoint's withdrawal; a withdrawal with neither in the 10 s before it is counted
// apart, and an older change does not count.
func TestSliceLag(t *testing.T) {
	const s = time.Second
	ms := time.Millisecond
	ep := func(t time.Duration, pod string, ready bool) timeline.Entry {
		return timeline.Entry{T: t, Kind: timeline.KindEndpoint, Pod: pod, Endpoint: &timeline.EndpointTransition{
			Change: timeline.EndpointChanged, Address: "10.0.0." + pod, To: &timeline.EndpointState{Ready: ready, Serving: ready}}}
	}
	pod := func(t time.Duration, pod, field, from, to string) timeline.Entry {
		return timeline.Entry{T: t, Kind: timeline.KindPod, Pod: pod, PodChange: &timeline.PodTransition{Field: field, From: from, To: to}}
	}
	entries := []timeline.Entry{
		ep(0, "a", true), ep(0, "b", true), ep(0, "c", true),
		pod(5*s, "c", "container/app/ready", "true", "false"), // 15 s before c's withdrawal: too old
		pod(10*s, "a", "container/app/ready", "true", "false"), ep(10*s+40*ms, "a", false),
		pod(20*s, "b", "deleting", "", "true"), ep(20*s+300*ms, "b", false),
		ep(20*s, "c", false),
	}
	got := sliceLag(entries)
	want := SliceLag{Withdrawals: 2, Readiness: 1, Deletion: 1, Unmatched: 1, Median: 300 * ms, Max: 300 * ms}
	if got == nil || *got != want {
		t.Fatalf("slice lag %+v, want %+v", got, want)
	}
	if line := sliceLine(got); !strings.Contains(line, "median 300 ms max 300 ms after the pod's change, over 2 withdrawals (1 by readiness, 1 by deletion, 1 with no pod change seen)") {
		t.Errorf("line %q", line)
	}
	if sliceLag(entries[:3]) != nil {
		t.Error("want nothing without withdrawals")
	}
}
