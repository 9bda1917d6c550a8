package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeIptables keeps the rules of OUTPUT and FORWARD per family and answers what fenceFirst and
// Fence send: -S CHAIN, -I CHAIN 1 SPEC, -D CHAIN SPEC (the first rule that is exactly SPEC) and -L
// of the fence chain.
type fakeIptables struct {
	rules map[string][]string // "iptables OUTPUT" → rule specs after "-A OUTPUT "
	calls []string
}

func newFakeIptables(output, forward []string) *fakeIptables {
	f := &fakeIptables{rules: map[string][]string{}}
	for _, ipt := range []string{"iptables", "ip6tables"} {
		f.rules[ipt+" OUTPUT"] = slices.Clone(output)
		f.rules[ipt+" FORWARD"] = slices.Clone(forward)
	}
	return f
}

func (f *fakeIptables) exec(_ context.Context, _ string, args ...string) ([]byte, error) {
	f.calls = append(f.calls, strings.Join(args, " "))
	if len(args) < 4 || args[1] != "-w" {
		return nil, fmt.Errorf("unexpected command %v", args)
	}
	ipt, op, chain := args[0], args[2], args[3]
	key := ipt + " " + chain
	switch op {
	case "-S":
		var b strings.Builder
		fmt.Fprintf(&b, "-P %s ACCEPT\n", chain)
		for _, r := range f.rules[key] {
			fmt.Fprintf(&b, "-A %s %s\n", chain, r)
		}
		return []byte(b.String()), nil
	case "-L":
		return []byte("Chain PROBEGATE-EGRESS (2 references)\n    pkts      bytes target     prot opt in     out     source               destination\n       3      180 REJECT     all  --  *      *       0.0.0.0/0            0.0.0.0/0\n"), nil
	case "-I":
		f.rules[key] = append([]string{strings.Join(args[5:], " ")}, f.rules[key]...)
		return nil, nil
	case "-D":
		spec := strings.Join(args[4:], " ")
		i := slices.Index(f.rules[key], spec)
		if i < 0 {
			return nil, fmt.Errorf("iptables: Bad rule (does a matching rule exist in that chain?)")
		}
		f.rules[key] = slices.Delete(f.rules[key], i, i+1)
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected command %v", args)
}

const (
	kubeFirewall = `-m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL`
	kubeServices = `-m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`
	kubeForward  = `-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD`
	fenceJump    = "-j " + FenceChain
	markedJump   = "-m comment --comment " + firstComment + " -j " + FenceChain
)

func TestFenceFirstMovesTheFenceAboveKubeProxy(t *testing.T) {
	f := newFakeIptables(
		[]string{kubeFirewall, kubeServices, "-j KUBE-FIREWALL", fenceJump},
		[]string{kubeFirewall, kubeForward, kubeServices, fenceJump})
	c := &Cluster{NodeContainer: "n", exec: f.exec, log: slog.New(slog.DiscardHandler)}
	if st, err := c.FenceOn(context.Background(), "n"); err != nil || st.OutputPos != 4 || st.ForwardPos != 4 || st.Output6Pos != 4 || st.Forward6Pos != 4 {
		t.Fatalf("before: %+v, %v", st, err)
	}
	if err := c.checkFenceFirst(context.Background()); err == nil {
		t.Fatal("checkFenceFirst accepted a fence below kube-proxy's jumps")
	}
	if err := c.fenceFirst(context.Background(), "n", time.Second); err != nil {
		t.Fatal(err)
	}
	for key, rs := range f.rules {
		if rs[0] != markedJump || slices.Contains(rs, fenceJump) || len(rs) != 4 {
			t.Errorf("%s: %q, want the one (marked) fence jump first and the other rules kept", key, rs)
		}
	}
	if err := c.checkFenceFirst(context.Background()); err != nil {
		t.Error(err)
	}
	// Already first: nothing is changed.
	f.calls = nil
	if err := c.fenceFirst(context.Background(), "n", time.Second); err != nil {
		t.Fatal(err)
	}
	for _, call := range f.calls {
		if !strings.Contains(call, " -S ") {
			t.Errorf("changed a fence already first: %s", call)
		}
	}
}

func TestFenceFirstWaitsForKubeProxyThenActsAnyway(t *testing.T) {
	f := newFakeIptables([]string{fenceJump}, []string{fenceJump})
	f.rules["iptables OUTPUT"] = []string{"-j KUBE-FIREWALL", fenceJump}
	c := &Cluster{NodeContainer: "n", exec: f.exec, log: slog.New(slog.DiscardHandler)}
	start := time.Now()
	if err := c.fenceFirst(context.Background(), "n", 600*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Errorf("did not wait for kube-proxy's jumps (%s)", waited)
	}
	if rs := f.rules["iptables OUTPUT"]; rs[0] != markedJump || len(rs) != 2 {
		t.Errorf("OUTPUT %q: want the fence first", rs)
	}
}

// A rule inserted above the marked jump after it was put first (kube-proxy restarted on a node
// that lost its rules) is overtaken again, and no step leaves the chain without a fence jump.
func TestFenceFirstOvertakesARuleInsertedAboveIt(t *testing.T) {
	f := newFakeIptables([]string{kubeServices, markedJump}, []string{markedJump, kubeForward, kubeServices})
	c := &Cluster{NodeContainer: "n", exec: func(ctx context.Context, node string, args ...string) ([]byte, error) {
		out, err := f.exec(ctx, node, args...)
		for key, rs := range f.rules {
			if !slices.ContainsFunc(rs, func(r string) bool { return strings.HasSuffix(r, fenceJump) }) {
				t.Errorf("after %v: %s has no fence jump", args, key)
			}
		}
		return out, err
	}, log: slog.New(slog.DiscardHandler)}
	if err := c.fenceFirst(context.Background(), "n", time.Second); err != nil {
		t.Fatal(err)
	}
	for key, rs := range f.rules {
		if rs[0] != markedJump || slices.Contains(rs, fenceJump) || len(rs) != len(slices.Compact(slices.Clone(rs))) {
			t.Errorf("%s: %q, want the marked jump first, once", key, rs)
		}
	}
}

// Every node is read and put right: a cluster is refused while any one node's fence, in either
// family, is not first, and named in the refusal.
func TestFencesCoverEveryNode(t *testing.T) {
	nodes := map[string]*fakeIptables{
		"pg-control-plane": newFakeIptables([]string{markedJump, kubeServices}, []string{markedJump, kubeServices}),
		"pg-worker":        newFakeIptables([]string{markedJump, kubeServices}, []string{markedJump, kubeServices}),
		"pg-worker2":       newFakeIptables([]string{markedJump, kubeServices}, []string{markedJump, kubeServices}),
	}
	nodes["pg-worker2"].rules["ip6tables FORWARD"] = []string{kubeFirewall, kubeForward, kubeServices, fenceJump}
	c := &Cluster{NodeContainer: "pg-control-plane", Nodes: []string{"pg-control-plane", "pg-worker", "pg-worker2"}, log: slog.New(slog.DiscardHandler),
		exec: func(ctx context.Context, node string, args ...string) ([]byte, error) {
			f, ok := nodes[node]
			if !ok {
				return nil, fmt.Errorf("no node %s", node)
			}
			return f.exec(ctx, node, args...)
		}}
	ctx := context.Background()
	sts, err := c.Fences(ctx)
	if err != nil || len(sts) != 3 {
		t.Fatalf("Fences: %v, %v", sts, err)
	}
	if sts[2].Node != "pg-worker2" || sts[2].Forward6Pos != 4 || sts[2].First() || !sts[1].First() {
		t.Errorf("statuses %+v", sts)
	}
	if err := c.checkFence(ctx); err != nil {
		t.Errorf("checkFence refused fences that are all present: %v", err)
	}
	err = c.checkFenceFirst(ctx)
	if err == nil || !strings.Contains(err.Error(), "pg-worker2") {
		t.Fatalf("checkFenceFirst: %v, want pg-worker2 refused", err)
	}
	if err := c.PutFencesFirst(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.checkFenceFirst(ctx); err != nil {
		t.Error(err)
	}
	delete(nodes["pg-worker"].rules, "iptables OUTPUT")
	if err := c.checkFence(ctx); err == nil || !strings.Contains(err.Error(), "pg-worker ") {
		t.Errorf("checkFence: %v, want pg-worker refused for a missing jump", err)
	}
}
