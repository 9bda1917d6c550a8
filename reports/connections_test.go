package reports_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/reports/reportstest"
)

// grpcConnections are three connections of a gRPC load: the first pinned to web-0, the second
// closed by a GOAWAY and its port reused by the third, pinned to web-2.
func grpcConnections(start time.Time) ([]reports.Connection, []timeline.Request) {
	conns := []reports.Connection{
		{Client: 0, Local: "172.18.0.1:40000", OpenedAt: start, Calls: 3},
		{Client: 1, Local: "172.18.0.1:40002", OpenedAt: start, ClosedAt: start.Add(5 * time.Second), Calls: 2},
		{Client: 1, Local: "172.18.0.1:40002", OpenedAt: start.Add(6 * time.Second), Calls: 2},
	}
	q := func(seq uint64, c reports.Connection, pod string) timeline.Request {
		return timeline.Request{Seq: seq, Start: c.OpenedAt.Add(time.Second), Conn: c.Local, ConnAt: c.OpenedAt, Pod: pod, GRPC: "OK"}
	}
	reqs := []timeline.Request{
		q(0, conns[0], "web-0"), q(1, conns[0], "web-0"), q(2, conns[0], ""),
		q(3, conns[1], "web-1"), q(4, conns[1], "web-1"),
		q(5, conns[2], "web-2"), q(6, conns[2], "web-2"),
		{Seq: 7, Conn: "172.18.0.1:49999", Pod: "web-1"}, // on no connection of the list
	}
	return conns, reqs
}

func TestPinConnectionsByLocalAddressAndOpening(t *testing.T) {
	conns, reqs := grpcConnections(reportstest.Start)
	got := reports.PinConnections(conns, reqs)
	want := []struct {
		pod  string
		pods map[string]uint64
	}{
		{"web-0", map[string]uint64{"web-0": 2}},
		{"web-1", map[string]uint64{"web-1": 2}},
		{"web-2", map[string]uint64{"web-2": 2}},
	}
	for i, w := range want {
		if got[i].Pod != w.pod || len(got[i].Pods) != len(w.pods) || got[i].Pods[w.pod] != w.pods[w.pod] {
			t.Errorf("connection %d: pod %q, pods %v; want %q, %v", i+1, got[i].Pod, got[i].Pods, w.pod, w.pods)
		}
	}
	// Calls attributed to two pods: no one pod (an attribution that disagrees with itself).
	reqs[2].Pod = "web-1"
	got = reports.PinConnections(conns, reqs)
	if got[0].Pod != "" || got[0].Pods["web-0"] != 2 || got[0].Pods["web-1"] != 1 {
		t.Errorf("split connection: pod %q, pods %v", got[0].Pod, got[0].Pods)
	}
}

func TestTerminalNamesEachConnectionsPod(t *testing.T) {
	r := reportstest.SampleReport(1)
	conns, reqs := grpcConnections(reportstest.Start)
	conns = append(conns, reports.Connection{Client: 2, Local: "172.18.0.1:40004", OpenedAt: reportstest.Start, Calls: 1})
	r.Scenarios[0].Connections = reports.PinConnections(conns, reqs)
	var b strings.Builder
	if err := reports.WriteTerminal(&b, r, false); err != nil {
		t.Fatal(err)
	}
	want := "gRPC: 4 connections, 1 closed during the load; pinned: conn1→web-0 (3 calls), conn2→web-1 (2 calls, closed), conn3→web-2 (2 calls), conn4→? (1 call)"
	if !strings.Contains(b.String(), want) {
		t.Errorf("terminal:\n%s\nwant the line %q", b.String(), want)
	}
	// An HTTP scenario has no connections and no such line.
	r.Scenarios[0].Connections = nil
	b.Reset()
	if err := reports.WriteTerminal(&b, r, false); err != nil || strings.Contains(b.String(), "gRPC:") {
		t.Errorf("HTTP scenario: err %v, terminal:\n%s", err, b.String())
	}
}

func TestConnectionsRoundTrip(t *testing.T) {
	r := reportstest.SampleReport(1)
	conns, reqs := grpcConnections(reportstest.Start)
	r.Scenarios[0].Connections = reports.PinConnections(conns, reqs)
	var buf bytes.Buffer
	if err := reports.WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	back, err := reports.ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := back.Scenarios[0].Connections
	if len(got) != 3 || got[1].Pod != "web-1" || !got[1].ClosedAt.Equal(conns[1].ClosedAt) || !got[2].ClosedAt.IsZero() {
		t.Errorf("connections after a round trip: %+v", got)
	}
}
