package cluster_test

import (
	"context"
	"encoding/json"
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
// It destroys the shared cluster, so it only runs when PROBEGATE_LIFECYCLE is set:
//
//	1     the whole cycle in one run
//	up    delete, warm create (timed, fences checked) and leave the cluster up for the tests that
//	      follow; the host's sysctls before it are written to PROBEGATE_LIFECYCLE_SNAPSHOT
//	down  delete (timed) and compare the host's sysctls with that snapshot
//
// hack/test.sh runs "up" first and "down" last, so the cluster the tests use is the one the
// lifecycle created: one warm create and one delete fewer than a cycle of its own.
func TestIntegrationClusterLifecycle(t *testing.T) {
	mode := os.Getenv("PROBEGATE_LIFECYCLE")
	if testing.Short() || (mode != "1" && mode != "up" && mode != "down") {
		t.Skip("destroys the shared cluster: run with PROBEGATE_LIFECYCLE=1, up or down (hack/test.sh does)")
	}
	snapshot := os.Getenv("PROBEGATE_LIFECYCLE_SNAPSHOT")
	if mode != "1" && snapshot == "" {
		t.Fatalf("PROBEGATE_LIFECYCLE=%s needs PROBEGATE_LIFECYCLE_SNAPSHOT, the file that carries the host's sysctls from up to down", mode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	var before map[string]string
	if mode == "down" {
		before = readSnapshot(t, snapshot)
	} else {
		if err := cluster.Delete(ctx, cluster.Options{}); err != nil {
			t.Fatalf("initial delete: %v", err)
		}
		before = sysctlSnapshot(t)
		// The timed create measures `kind create` and readiness only: the node image is built.
		start := time.Now()
		c, err := cluster.Create(ctx, cluster.Options{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		t.Logf("cluster create (warm) %s", time.Since(start).Round(100*time.Millisecond))
		sts, err := c.Fences(ctx)
		if err != nil || len(sts) != len(c.Nodes) {
			t.Fatalf("fences after create: %+v, %v", sts, err)
		}
		for _, st := range sts {
			if !st.First() {
				t.Fatalf("fence after create: %s", st)
			}
		}
		if mode == "up" {
			writeSnapshot(t, snapshot, before)
			return
		}
	}
	start := time.Now()
	if err := cluster.Delete(ctx, cluster.Options{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	t.Logf("cluster delete %s", time.Since(start).Round(100*time.Millisecond))

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

// writeSnapshot saves a sysctl snapshot for the "down" half of the lifecycle.
func writeSnapshot(t *testing.T, path string, m map[string]string) {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatalf("write the sysctl snapshot: %v", err)
	}
}

// readSnapshot reads what writeSnapshot saved; a missing or empty one fails the test (nothing to
// compare the host with).
func readSnapshot(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the sysctl snapshot of PROBEGATE_LIFECYCLE=up: %v", err)
	}
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil || len(m) == 0 {
		t.Fatalf("sysctl snapshot %s: %d keys, %v", path, len(m), err)
	}
	return m
}
