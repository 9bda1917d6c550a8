package routing

import (
	"context"
	"net/netip"
	"testing"
	"time"
)

const sample = `-A KUBE-SVC-ABC -m comment --comment "ns1/target:http -> 10.244.0.7:8080" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-1
-A KUBE-SVC-ABC -m comment --comment "ns1/target:http -> 10.244.0.9:8080" -j KUBE-SEP-2
-A KUBE-SVC-DEF -m comment --comment "ns1/target-admin:x -> 10.244.0.7:9090" -j KUBE-SEP-3
T 1796122714.100000000
-A KUBE-SVC-ABC -m comment --comment "ns1/target:http -> 10.244.0.9:8080" -j KUBE-SEP-2
T 1796122714.600000000
-A KUBE-SVC-ABC -m comment --comment "ns1/target -> 10.244.0.9:8080" -j KUBE-SEP-2
-A KUBE-SVC-ABC -m comment --comment "ns1/target -> 10.244.0.12:8080" -j KUBE-SEP-4
T 1796122715.1
`

func TestParseAndChanges(t *testing.T) {
	snaps, bad, err := Parse(sample, "ns1/target")
	if err != nil || bad != 0 {
		t.Fatalf("Parse: bad %d, err %v", bad, err)
	}
	if len(snaps) != 3 || len(snaps[0].Backends) != 2 || len(snaps[1].Backends) != 1 || len(snaps[2].Backends) != 2 {
		t.Fatalf("snapshots = %+v, want 2, 1, 2 backends (target-admin is another Service)", snaps)
	}
	at := func(s string) time.Time { v, _ := parseStamp(s); return v }
	if !snaps[2].At.Equal(at("1796122715.1")) || snaps[2].At.Nanosecond() != 100_000_000 {
		t.Errorf("stamp = %v", snaps[2].At)
	}
	ch := Changes(snaps)
	a7, a9, a12 := netip.MustParseAddr("10.244.0.7"), netip.MustParseAddr("10.244.0.9"), netip.MustParseAddr("10.244.0.12")
	want := []Change{
		{Addr: a7, Routed: true, At: at("1796122714.1")},
		{Addr: a9, Routed: true, At: at("1796122714.1")},
		{Addr: a7, Routed: false, Since: at("1796122714.1"), At: at("1796122714.6")},
		{Addr: a12, Routed: true, Since: at("1796122714.6"), At: at("1796122715.1")},
	}
	if len(ch) != len(want) {
		t.Fatalf("changes = %+v, want %+v", ch, want)
	}
	for i := range want {
		if ch[i].Addr != want[i].Addr || ch[i].Routed != want[i].Routed || !ch[i].Since.Equal(want[i].Since) || !ch[i].At.Equal(want[i].At) {
			t.Errorf("change %d = %+v, want %+v", i, ch[i], want[i])
		}
	}
}

func TestParseRejectsBadInput(t *testing.T) {
	if _, _, err := Parse("T notanumber\n", "ns/x"); err == nil {
		t.Error("a malformed stamp must be an error")
	}
	_, bad, err := Parse("garbage line\n-A X -m comment --comment \"ns/x:p -> nope\" -j Y\nT 1\n", "ns/x")
	if err != nil || bad != 2 {
		t.Errorf("bad = %d, err %v; want 2 unreadable lines and no error", bad, err)
	}
}

func TestStartRefusesNamesThatAreNotDNSLabels(t *testing.T) {
	for _, n := range []string{"a;rm -rf /", "A", "ns'"} {
		if _, err := Start(t.Context(), func(_ context.Context, _ ...string) ([]byte, error) { return nil, nil }, n, "svc", 0, nil); err == nil {
			t.Errorf("Start(%q) = nil error", n)
		}
	}
}
