package timeline_test

import (
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func endpoint(t time.Duration, pod, change string, to *timeline.EndpointState) timeline.Entry {
	return timeline.Entry{T: t, Kind: timeline.KindEndpoint, Pod: pod, Endpoint: &timeline.EndpointTransition{Change: change, To: to}}
}

// One reading of endpoint transitions: a terminating endpoint is out of rotation even when its
// ready flag was left true, a removed one is gone, and the bands close at the end.
func TestEndpointHistory(t *testing.T) {
	const s = time.Second
	ready := &timeline.EndpointState{Ready: true, Serving: true}
	odd := &timeline.EndpointState{Ready: true, Serving: true, Terminating: true} // publishNotReadyAddresses-style
	entries := []timeline.Entry{
		endpoint(1*s, "a", timeline.EndpointAdded, ready),
		endpoint(1*s, "b", timeline.EndpointAdded, ready),
		endpoint(5*s, "b", timeline.EndpointChanged, odd),
		endpoint(8*s, "b", timeline.EndpointRemoved, nil),
	}
	h := timeline.Endpoints(entries)
	if got := h.ReadyAt(2 * s); len(got) != 2 {
		t.Errorf("ready at 2s = %v, want a and b", got)
	}
	if got := h.ReadyAt(6 * s); len(got) != 1 || got[0] != "a" {
		t.Errorf("ready at 6s = %v, want [a]: a terminating endpoint is out of rotation", got)
	}
	bands := h.Bands(10 * s)
	if len(bands) != 3 {
		t.Fatalf("bands = %+v, want a 1–10s, b 1–5s, b 5–8s", bands)
	}
	for _, b := range bands {
		if b.Pod == "b" && b.State.Terminating && (b.From != 5*s || b.To != 8*s) {
			t.Errorf("b terminating band %s–%s, want 5s–8s", b.From, b.To)
		}
		if b.Pod == "a" && b.To != 10*s {
			t.Errorf("a's band ends %s, want the end 10s", b.To)
		}
	}
}

func TestWatchGaps(t *testing.T) {
	const s = time.Second
	entries := []timeline.Entry{
		{T: 10 * s, Kind: timeline.KindMark, Mark: &timeline.Mark{Name: timeline.MarkWatchGap, Detail: "pods watch ended; relisting"}},
		{T: 12 * s, Kind: timeline.KindPod, Pod: "a", Recovered: true},
		{T: 50 * s, Kind: timeline.KindPod, Pod: "b", Recovered: true},
	}
	gaps := timeline.WatchGaps(entries)
	if len(gaps) != 2 || gaps[0].From != 10*s || gaps[0].To != 12*s || gaps[1].From != 49*s || gaps[1].To != 50*s {
		t.Errorf("gaps = %+v", gaps)
	}
}

// Withdrawals: each span out of rotation that follows one in it, with when the pod came back; an
// endpoint that was never in rotation has none, and one that never came back ends Never.
func TestWithdrawals(t *testing.T) {
	const s = time.Second
	ready := &timeline.EndpointState{Ready: true, Serving: true}
	notReady := &timeline.EndpointState{}
	draining := &timeline.EndpointState{Serving: true, Terminating: true}
	entries := []timeline.Entry{
		endpoint(1*s, "a", timeline.EndpointAdded, ready),
		endpoint(3*s, "a", timeline.EndpointChanged, notReady),
		endpoint(4*s, "a", timeline.EndpointChanged, notReady),
		endpoint(6*s, "a", timeline.EndpointChanged, ready),
		endpoint(9*s, "a", timeline.EndpointChanged, draining),
		endpoint(10*s, "a", timeline.EndpointRemoved, nil),
		endpoint(1*s, "b", timeline.EndpointAdded, notReady), // never in rotation
		endpoint(7*s, "b", timeline.EndpointRemoved, nil),
	}
	got := timeline.Endpoints(entries).Withdrawals()
	want := []struct {
		pod        string
		from, back time.Duration
	}{{"a", 3 * s, 6 * s}, {"a", 9 * s, timeline.Never}}
	if len(got) != len(want) {
		t.Fatalf("withdrawals = %+v, want %+v", got, want)
	}
	for i, w := range want {
		if got[i].Pod != w.pod || got[i].From.T != w.from || got[i].Back != w.back {
			t.Errorf("withdrawal %d = %s %s–%s, want %s %s–%s", i, got[i].Pod, got[i].From.T, got[i].Back, w.pod, w.from, w.back)
		}
	}
}
