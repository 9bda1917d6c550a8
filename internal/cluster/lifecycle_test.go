package cluster_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/cluster"
)

// Keys of `sysctl -a` that change by themselves (counters, random values) and say nothing about
// what a cluster left behind.
var volatileSysctls = []string{
	"fs.dentry-state", "fs.file-nr", "fs.inode-nr", "fs.inode-state", "fs.quota.", "kernel.random.",
	"kernel.ns_last_pid", "kernel.pty.nr", "net.netfilter.nf_conntrack_count", "kernel.sched_domain",
	"vm.stat_", "fs.aio-nr", "net.ipv4.tcp_fastopen_key", "kernel.tainted", "net.ipv4.neigh.", "net.ipv6.neigh.",
	"net.ipv4.conf.veth", "net.ipv6.conf.veth", "net.ipv4.conf.br-", "net.ipv6.conf.br-",
	"net.ipv4.neigh", "net.ipv6.neigh", "fs.binfmt_misc", "kernel.perf_event_max_sample_rate",
}

func sysctlSnapshot(t *testing.T) map[string]string {
	t.Helper()
	out, err := exec.Command("sysctl", "-a").Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("sysctl -a: %v", err)
	}
	m := map[string]string{}
next:
	for _, l := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(l, " = ")
		if !ok {
			continue
		}
		for _, p := range volatileSysctls {
			if strings.HasPrefix(k, p) {
				continue next
			}
		}
		m[k] = v
	}
	return m
}

// TestIntegrationClusterLifecycle deletes any running cluster, then creates it warm and deletes it
// again, timing both, and checks the host's sysctls are exactly as they were before the cluster.
// It destroys the shared cluster, so it only runs when PROBEGATE_LIFECYCLE=1 (hack/test.sh runs it
// first, before the other integration tests).
func TestIntegrationClusterLifecycle(t *testing.T) {
	if testing.Short() || os.Getenv("PROBEGATE_LIFECYCLE") != "1" {
		t.Skip("destroys the shared cluster: run with PROBEGATE_LIFECYCLE=1 (hack/test.sh does)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	if err := cluster.Delete(ctx, cluster.Options{}); err != nil {
		t.Fatalf("initial delete: %v", err)
	}
	before := sysctlSnapshot(t)

	// Warm the node image first so the timed create measures `kind create` and readiness only.
	start := time.Now()
	c, err := cluster.Create(ctx, cluster.Options{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	created := time.Since(start)
	sts, err := c.Fences(ctx)
	if err != nil || len(sts) != len(c.Nodes) {
		t.Fatalf("fences after create: %+v, %v", sts, err)
	}
	for _, st := range sts {
		if !st.First() {
			t.Fatalf("fence after create: %s", st)
		}
	}
	start = time.Now()
	if err := cluster.Delete(ctx, cluster.Options{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	deleted := time.Since(start)
	t.Logf("cluster create (warm) %s, delete %s", created.Round(100*time.Millisecond), deleted.Round(100*time.Millisecond))

	after := sysctlSnapshot(t)
	for k, v := range before {
		if a, ok := after[k]; ok && a != v {
			t.Errorf("host sysctl %s changed: %q → %q", k, v, a)
		}
	}
	if len(after) < len(before)/2 {
		t.Errorf("sysctl snapshot shrank from %d to %d keys", len(before), len(after))
	}
}
