package routing

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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

// The node-side loop, run here with a fake iptables-save: it reports the Service's backends, and
// ends by itself once the Service has had no rules for goneReads reads (a killed harness's namespace
// deleted) instead of polling for the two-hour bound.
func TestWatchLoopReadsRulesAndEndsWhenTheServiceIsGone(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules")
	if err := os.WriteFile(rules, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "iptables-save"), []byte("#!/bin/sh\ncat "+rules+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var mu sync.Mutex
	var out []byte
	done := make(chan struct{})
	local := func(ctx context.Context, args ...string) ([]byte, error) {
		if args[0] == "sh" && strings.Contains(args[2], "iptables-save") {
			b, err := exec.Command(args[0], args[1:]...).Output()
			mu.Lock()
			out = b
			mu.Unlock()
			close(done)
			return b, err
		}
		if args[0] == "test" {
			return nil, nil // the pid file: the loop writes it under /run, which a test may not have
		}
		return exec.CommandContext(ctx, args[0], args[1:]...).Output()
	}
	w, err := Start(t.Context(), local, "ns1", "target", 10*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := os.WriteFile(rules, nil, 0o644); err != nil { // the namespace is gone
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		w.Stop()
		t.Fatal("the loop kept polling after the Service's rules were gone")
	}
	mu.Lock()
	snaps, _, err := Parse(string(out), "ns1/target")
	mu.Unlock()
	if err != nil || len(snaps) < goneReads || len(snaps[0].Backends) != 3 || len(snaps[len(snaps)-1].Backends) != 0 {
		t.Errorf("snapshots %+v, err %v; want ns1/target's three backends, then empty reads until the loop ended", snaps, err)
	}
}
