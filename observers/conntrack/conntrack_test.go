package conntrack

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func TestParseLine(t *testing.T) {
	ev := "[1796122714.073845]\t    [NEW] tcp      6 120 SYN_SENT src=172.29.0.1 dst=172.29.0.2 sport=48778 dport=30080 [UNREPLIED] src=10.244.0.6 dst=10.244.0.1 sport=8080 dport=52196"
	f, ok, err := ParseLine(ev)
	if err != nil || !ok {
		t.Fatalf("event: ok %v, err %v", ok, err)
	}
	want := Flow{
		At:      time.Unix(1796122714, 73845000),
		Client:  netip.MustParseAddrPort("172.29.0.1:48778"),
		Service: netip.MustParseAddrPort("172.29.0.2:30080"),
		Backend: netip.MustParseAddrPort("10.244.0.6:8080"),
	}
	if f != want {
		t.Fatalf("event: got %+v, want %+v", f, want)
	}
	list := "tcp      6 117 TIME_WAIT src=172.29.0.1 dst=172.29.0.2 sport=41121 dport=30080 src=10.244.0.9 dst=10.244.0.1 sport=8080 dport=6349 [ASSURED] mark=0 use=1"
	f, ok, err = ParseLine(list)
	if err != nil || !ok || !f.At.IsZero() || f.Client.Port() != 41121 || f.Backend.Addr() != netip.MustParseAddr("10.244.0.9") {
		t.Fatalf("listing: %+v ok %v err %v", f, ok, err)
	}
	for _, skip := range []string{"", "NOTICE: Netlink socket buffer size has been set to 8388608 bytes.",
		"conntrack v1.4.7 (conntrack-tools): 2 flow events have been shown.",
		"udp      17 29 src=10.244.0.3 dst=10.96.0.10 sport=1 dport=53 src=10.96.0.10 dst=10.244.0.3 sport=53 dport=1 mark=0 use=1"} {
		if _, ok, err := ParseLine(skip); ok || err != nil {
			t.Errorf("%q: ok %v err %v, want skipped", skip, ok, err)
		}
	}
	for _, bad := range []string{
		"tcp 6 117 TIME_WAIT src=172.29.0.1 dst=172.29.0.2 sport=41121 dport=30080 [UNREPLIED]",
		"tcp 6 117 TIME_WAIT src=172.29.0.1 dst=172.29.0.2 sport=99999 dport=30080 src=10.244.0.9 dst=10.244.0.1 sport=8080 dport=1",
		"[17x.1] [NEW] tcp 6 117 SYN_SENT src=1.2.3.4 dst=1.2.3.5 sport=1 dport=2 src=1.2.3.6 dst=1.2.3.4 sport=3 dport=1",
	} {
		if _, _, err := ParseLine(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	flows, bad, _ := ParseOutput(ev + "\nNOTICE: x\n" + list + "\ntcp 6 1 src=1.1.1.1\n")
	if len(flows) != 2 || bad != 1 {
		t.Fatalf("ParseOutput: %d flows, %d bad; want 2, 1", len(flows), bad)
	}
}

func endpoint(t time.Duration, pod, addr string) timeline.Entry {
	return timeline.Entry{T: t, Kind: timeline.KindEndpoint, Pod: pod, Endpoint: &timeline.EndpointTransition{Address: addr}}
}

// TestAttributeJoinsRequestsToFlowsAndPods: hand-made requests, flows and endpoints, with a client
// port reused by a later connection, a pod IP reused by a replacement pod, a kept-alive connection,
// a refused request, a header that conntrack contradicts and a connection conntrack never saw.
func TestAttributeJoinsRequestsToFlowsAndPods(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ms := time.Millisecond
	entries := []timeline.Entry{
		endpoint(0, "web-a", "10.244.0.5"),
		endpoint(0, "web-b", "10.244.0.6"),
		endpoint(5*time.Second, "web-a", "10.244.0.5"),  // a later change of the same endpoint
		endpoint(20*time.Second, "web-c", "10.244.0.5"), // web-a's address reused
	}
	flow := func(s float64, client, backend string) Flow {
		return Flow{At: at(s), Client: netip.MustParseAddrPort(client), Service: netip.MustParseAddrPort("172.29.0.2:30080"),
			Backend: netip.MustParseAddrPort(backend)}
	}
	flows := []Flow{
		flow(1.001, "172.29.0.1:40000", "10.244.0.5:8080"),
		flow(2.001, "172.29.0.1:40001", "10.244.0.6:8080"),
		flow(25.001, "172.29.0.1:40000", "10.244.0.5:8080"),                                                        // port 40000 reused, address now web-c's
		{Client: netip.MustParseAddrPort("172.29.0.1:40002"), Backend: netip.MustParseAddrPort("10.244.0.6:8080")}, // listed only
	}
	req := func(seq uint64, s float64, conn, pod string) timeline.Request {
		q := timeline.Request{Seq: seq, T: time.Duration(s * float64(time.Second)), Start: at(s), Latency: 300 * ms, Status: 200, Conn: conn, Pod: pod}
		if pod != "" {
			q.PodFrom = timeline.PodFromHeader
		}
		return q
	}
	reqs := []timeline.Request{
		req(0, 1, "172.29.0.1:40000", ""),
		req(1, 10, "172.29.0.1:40000", ""), // kept alive: still the flow from 1 s
		req(2, 2, "172.29.0.1:40001", "web-b"),
		req(3, 25, "172.29.0.1:40000", ""),
		req(4, 3, "172.29.0.1:40002", ""),
		req(5, 4, "172.29.0.1:40001", "web-a"), // the header says otherwise
		req(6, 5, "172.29.0.1:49999", ""),      // conntrack never saw it
		{Seq: 7, T: 6 * time.Second, Start: at(6), Error: timeline.ErrRefused},
	}
	got, sum := Attribute(reqs, flows, entries)
	want := []struct{ pod, from string }{
		{"web-a", "conntrack"}, {"web-a", "conntrack"}, {"web-b", "header"}, {"web-c", "conntrack"},
		{"web-b", "conntrack"}, {"web-a", "header"}, {"", ""}, {"", ""},
	}
	for i, w := range want {
		if got[i].Pod != w.pod || got[i].PodFrom != w.from {
			t.Errorf("request %d: pod %q from %q, want %q from %q", i, got[i].Pod, got[i].PodFrom, w.pod, w.from)
		}
	}
	for i, q := range got {
		if want := map[int]string{5: "web-b"}[i]; q.ConntrackPod != want {
			t.Errorf("request %d: conntrack pod %q, want %q (set only where it contradicts the header)", i, q.ConntrackPod, want)
		}
	}
	if reqs[0].Pod != "" {
		t.Error("Attribute changed its input")
	}
	if sum.Flows != 4 || sum.Found != 6 || sum.Compared != 2 || sum.Agreed != 1 || len(sum.Disagreed) != 1 {
		t.Fatalf("summary %+v", sum)
	}
	if want := 6.0 / 7; sum.Coverage != want || sum.Agreement != 0.5 {
		t.Fatalf("coverage %v agreement %v, want %v and 0.5", sum.Coverage, sum.Agreement, want)
	}
	a := timeline.AttributionOf(got)
	if a.Reached != 7 || a.Attributed != 6 || a.ByConntrack != 4 || a.ByHeader != 2 {
		t.Fatalf("attribution %+v", a)
	}
}

// TestWatcherRunsAndStopsTheNodeStream drives a Watcher against a fake node: the stream's output
// and the table listing are both returned, and Stop kills the stream by its pid file.
func TestWatcherRunsAndStopsTheNodeStream(t *testing.T) {
	killed := make(chan struct{})
	var mu sync.Mutex
	var calls []string
	exec := func(ctx context.Context, args ...string) ([]byte, error) {
		cmd := strings.Join(args, " ")
		mu.Lock()
		calls = append(calls, cmd)
		mu.Unlock()
		switch {
		case strings.Contains(cmd, "conntrack -E"):
			<-killed
			return []byte("[1796122714.073845] [NEW] tcp 6 120 SYN_SENT src=172.29.0.1 dst=172.29.0.2 sport=1 dport=30080 [UNREPLIED] src=10.244.0.6 dst=10.244.0.1 sport=8080 dport=2\n"), nil
		case strings.HasPrefix(cmd, "conntrack -L"):
			return []byte("tcp 6 117 TIME_WAIT src=172.29.0.1 dst=172.29.0.2 sport=3 dport=30080 src=10.244.0.9 dst=10.244.0.1 sport=8080 dport=4 [ASSURED] mark=0 use=1\n"), nil
		case strings.Contains(cmd, "kill"):
			close(killed)
		}
		return nil, nil
	}
	w, err := Start(t.Context(), exec, netip.MustParseAddrPort("172.29.0.2:30080"), nil)
	if err != nil {
		t.Fatal(err)
	}
	flows, err := w.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(flows) != 2 || flows[0].Client.Port() != 1 || flows[1].Client.Port() != 3 {
		t.Fatalf("flows %+v", flows)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(calls, "\n"), "conntrack -E -e NEW -p tcp --orig-dst 172.29.0.2 --orig-port-dst 30080") {
		t.Fatalf("stream not filtered on the NodePort: %q", calls)
	}
}

// TestAttributeDatesTheConnection is issue #31's third explanation: a client port reused, the
// later connection's NEW event lost (or reported too late). Undated, the request takes the earlier
// connection's flow and with it another pod; dated by its connection's opening, it takes the flow
// reported nearest after that opening, or none, never an earlier connection's.
func TestAttributeDatesTheConnection(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	entries := []timeline.Entry{endpoint(0, "web-a", "10.244.0.5"), endpoint(0, "web-b", "10.244.0.6")}
	flow := func(s float64, client, backend string) Flow {
		f := Flow{Client: netip.MustParseAddrPort(client), Service: netip.MustParseAddrPort("172.29.0.2:30080"),
			Backend: netip.MustParseAddrPort(backend)}
		if s >= 0 {
			f.At = at(s)
		}
		return f
	}
	flows := []Flow{
		flow(10.001, "172.29.0.1:40000", "10.244.0.5:8080"), // the port's first connection, to web-a
		flow(12.402, "172.29.0.1:40000", "10.244.0.6:8080"), // its reuse at 12.4 s, to web-b
		flow(11.001, "172.29.0.1:40001", "10.244.0.5:8080"), // a first connection; its reuse's event was lost
		flow(-1, "172.29.0.1:40002", "10.244.0.6:8080"),     // listed only, the port's one connection
	}
	req := func(seq uint64, s, opened float64, conn string) timeline.Request {
		q := timeline.Request{Seq: seq, T: time.Duration(s * float64(time.Second)), Start: at(s), Latency: 100 * time.Millisecond, Status: 200, Conn: conn}
		if opened >= 0 {
			q.ConnAt = at(opened)
		}
		return q
	}
	reqs := []timeline.Request{
		req(0, 12.4, 12.4, "172.29.0.1:40000"),  // its own flow: web-b
		req(1, 12.0, 11.95, "172.29.0.1:40001"), // reuse, event lost: undated it would be web-a's flow
		req(2, 12.0, -1, "172.29.0.1:40001"),    // the same, undated (an old timeline): web-a, as before
		req(3, 13.0, 13.0, "172.29.0.1:40002"),  // no timed flow from the port at all: the listing
		req(4, 10.5, 10.0, "172.29.0.1:40000"),  // a connection opened before its request: its flow at 10.001
	}
	got, _ := Attribute(reqs, flows, entries)
	want := []struct {
		pod    string
		flowAt float64
	}{{"web-b", 12.402}, {"", -1}, {"web-a", 11.001}, {"web-b", -1}, {"web-a", 10.001}}
	for i, w := range want {
		if got[i].Pod != w.pod {
			t.Errorf("request %d: pod %q, want %q", i, got[i].Pod, w.pod)
		}
		if w.flowAt >= 0 && !got[i].FlowAt.Equal(at(w.flowAt)) {
			t.Errorf("request %d: flow at %v, want %v", i, got[i].FlowAt.Sub(t0), at(w.flowAt).Sub(t0))
		}
		if w.flowAt < 0 && !got[i].FlowAt.IsZero() {
			t.Errorf("request %d: flow at %v, want none", i, got[i].FlowAt.Sub(t0))
		}
	}
}

// A gRPC connection carries every call of its client for the whole load: each call, however long
// after the opening, takes the flow of its connection's opening (ConnAt); after a GOAWAY the new
// connection on a reused port takes its own.
func TestAttributeLongLivedGRPCConnection(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	entries := []timeline.Entry{endpoint(0, "web-a", "10.244.0.5"), endpoint(0, "web-b", "10.244.0.6")}
	flow := func(s float64, backend string) Flow {
		return Flow{At: at(s), Client: netip.MustParseAddrPort("172.29.0.1:40000"), Service: netip.MustParseAddrPort("172.29.0.2:30080"),
			Backend: netip.MustParseAddrPort(backend)}
	}
	flows := []Flow{flow(0.002, "10.244.0.5:9999"), flow(40.003, "10.244.0.6:9999")}
	call := func(seq uint64, s, opened float64) timeline.Request {
		return timeline.Request{Seq: seq, T: time.Duration(s * float64(time.Second)), Start: at(s), Latency: 2 * time.Millisecond,
			GRPC: "OK", Conn: "172.29.0.1:40000", ConnAt: at(opened), Reused: s > opened}
	}
	reqs := []timeline.Request{call(0, 0, 0.001), call(1, 20, 0.001), call(2, 39.9, 0.001), call(3, 40.1, 40.0), call(4, 55, 40.0)}
	got, sum := Attribute(reqs, flows, entries)
	for i, want := range []string{"web-a", "web-a", "web-a", "web-b", "web-b"} {
		if got[i].Pod != want || got[i].PodFrom != timeline.PodFromConntrack {
			t.Errorf("call %d at %v: pod %q from %q, want %q from conntrack", i, got[i].Start.Sub(t0), got[i].Pod, got[i].PodFrom, want)
		}
	}
	if sum.Coverage != 1 {
		t.Errorf("coverage %v, want 1", sum.Coverage)
	}
}
