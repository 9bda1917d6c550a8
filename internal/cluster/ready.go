package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// FenceChain is the iptables chain the node image's entrypoint installs before systemd starts.
const FenceChain = "PROBEGATE-EGRESS"

// FenceStatus is what one node's egress fence looks like.
type FenceStatus struct {
	Node string
	// OutputPos and ForwardPos are the 1-based positions of the jump to the fence in OUTPUT and
	// FORWARD of iptables, Output6Pos and Forward6Pos of ip6tables (0: missing). The entrypoint puts
	// it first; kube-proxy and the kubelet then insert their own jumps above it (KUBE-FORWARD
	// accepts marked and established packets), so fenceFirst moves it back once they have.
	OutputPos, ForwardPos   int
	Output6Pos, Forward6Pos int
	EndsInReject            bool  // the IPv4 and IPv6 chains' last rules REJECT
	Rejected                int64 // packets REJECTed so far (IPv4 and IPv6)
}

// First reports whether the fence is complete and the first rule of OUTPUT and FORWARD in both
// families.
func (st FenceStatus) First() bool {
	return st.EndsInReject && st.OutputPos == 1 && st.ForwardPos == 1 && st.Output6Pos == 1 && st.Forward6Pos == 1
}

// String is the status in one line, as `probegate cluster fence` prints it.
func (st FenceStatus) String() string {
	return fmt.Sprintf("node %s: chain %s: OUTPUT rule #%d, FORWARD rule #%d (IPv6: #%d, #%d), ends in REJECT: %v, rejected packets: %d",
		st.Node, FenceChain, st.OutputPos, st.ForwardPos, st.Output6Pos, st.Forward6Pos, st.EndsInReject, st.Rejected)
}

// Fences reads the egress fence of every node, the control plane's first. It sends nothing
// anywhere: it only reads iptables.
func (c *Cluster) Fences(ctx context.Context) ([]FenceStatus, error) {
	var out []FenceStatus
	for _, n := range c.nodes() {
		st, err := c.FenceOn(ctx, n)
		if err != nil {
			return out, err
		}
		out = append(out, st)
	}
	return out, nil
}

// FenceOn reads one node's egress fence.
func (c *Cluster) FenceOn(ctx context.Context, node string) (FenceStatus, error) {
	st := FenceStatus{Node: node, EndsInReject: true}
	for _, p := range []struct {
		ipt, chain string
		pos        *int
	}{{"iptables", "OUTPUT", &st.OutputPos}, {"iptables", "FORWARD", &st.ForwardPos},
		{"ip6tables", "OUTPUT", &st.Output6Pos}, {"ip6tables", "FORWARD", &st.Forward6Pos}} {
		rs, err := c.chainRules(ctx, node, p.ipt, p.chain)
		if err != nil {
			return st, err
		}
		*p.pos = slices.IndexFunc(rs, isFenceJump) + 1
	}
	for _, ipt := range []string{"iptables", "ip6tables"} {
		out, err := c.NodeExecOn(ctx, node, ipt, "-w", "-L", FenceChain, "-v", "-n", "-x")
		if err != nil {
			return st, fmt.Errorf("read node %s %s fence chain: %w", node, ipt, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		last := strings.Fields(lines[len(lines)-1])
		if len(last) < 3 || last[2] != "REJECT" {
			st.EndsInReject = false
			continue
		}
		var n int64
		fmt.Sscan(last[0], &n)
		st.Rejected += n
	}
	return st, nil
}

// nodes are the cluster's node containers: Nodes, or the control plane alone when they were not
// listed.
func (c *Cluster) nodes() []string {
	if len(c.Nodes) > 0 {
		return c.Nodes
	}
	return []string{c.NodeContainer}
}

// chainRules returns the rules of one chain of a node's filter table, as `-A CHAIN …` specs in
// order.
func (c *Cluster) chainRules(ctx context.Context, node, ipt, chain string) ([]string, error) {
	out, err := c.NodeExecOn(ctx, node, ipt, "-w", "-S", chain)
	if err != nil {
		return nil, fmt.Errorf("read node %s %s %s: %w", node, ipt, chain, err)
	}
	var rs []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "-A "+chain+" ") {
			rs = append(rs, strings.TrimSpace(l))
		}
	}
	return rs, nil
}

// isFenceJump reports whether rule jumps to the fence; isMarkedJump whether it is the jump
// fenceFirst inserts, commented firstComment so that it is told apart from the entrypoint's.
func isFenceJump(rule string) bool  { return strings.HasSuffix(rule, "-j "+FenceChain) }
func isMarkedJump(rule string) bool { return isFenceJump(rule) && strings.Contains(rule, firstComment) }

const (
	// kubeProxyJump is the jump kube-proxy inserts at the top of OUTPUT and FORWARD, after the
	// kubelet's: once both chains hold it, neither inserts again (they only check their jumps exist).
	kubeProxyJump = "-j KUBE-SERVICES"
	// firstComment marks the jump fenceFirst inserts, so that each jump is deleted by its spec,
	// never by a rule number that a concurrent insert could shift.
	firstComment = "probegate-fence-first"
)

// fenceFirst makes the jump to the fence the first rule of a node's OUTPUT and FORWARD (IPv4 and
// IPv6) and the only one, after waiting up to within for kube-proxy to have inserted its jumps: a
// packet meets the fence before any rule that could accept it.
func (c *Cluster) fenceFirst(ctx context.Context, node string, within time.Duration) error {
	chains := []string{"OUTPUT", "FORWARD"}
	missing := ""
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, within, true, func(ctx context.Context) (bool, error) {
		missing = ""
		for _, chain := range chains {
			rs, err := c.chainRules(ctx, node, "iptables", chain)
			if err != nil {
				return false, err
			}
			if !slices.ContainsFunc(rs, func(r string) bool { return strings.Contains(r, kubeProxyJump) }) {
				missing = chain + " has no " + kubeProxyJump
			}
		}
		return missing == "", nil
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return err
	case err != nil && missing == "":
		return err // reading the rules failed
	case err != nil:
		c.logger().Warn("kube-proxy has not programmed the node yet; putting the egress fence first anyway", "node", node, "missing", missing)
	}
	for _, ipt := range []string{"iptables", "ip6tables"} {
		for _, chain := range chains {
			if err := c.fenceFirstIn(ctx, node, ipt, chain); err != nil {
				return fmt.Errorf("put the egress fence first in node %s %s %s: %w", node, ipt, chain, err)
			}
		}
	}
	return nil
}

// fenceFirstIn makes the marked jump the first rule of one chain and its only jump to the fence.
// A plain jump goes on top first and holds the fence while older jumps are taken out, then the
// marked one goes on top and the plain ones out: no step leaves the chain unfenced.
func (c *Cluster) fenceFirstIn(ctx context.Context, node, ipt, chain string) error {
	plain := []string{"-j", FenceChain}
	marked := []string{"-m", "comment", "--comment", firstComment, "-j", FenceChain}
	rs, err := c.chainRules(ctx, node, ipt, chain)
	if err != nil {
		return err
	}
	if len(rs) > 0 && isMarkedJump(rs[0]) && len(slices.DeleteFunc(rs, isFenceJump)) == len(rs)-1 {
		return nil
	}
	insert := func(spec []string) error {
		_, err := c.NodeExecOn(ctx, node, append([]string{ipt, "-w", "-I", chain, "1"}, spec...)...)
		return err
	}
	// removeAll deletes, by spec, every rule the deletion reaches: the first match each time.
	removeAll := func(spec []string, is func(string) bool) error {
		for {
			rs, err := c.chainRules(ctx, node, ipt, chain)
			if err != nil || !slices.ContainsFunc(rs, is) {
				return err
			}
			if _, err := c.NodeExecOn(ctx, node, append([]string{ipt, "-w", "-D", chain}, spec...)...); err != nil {
				return err
			}
		}
	}
	isPlain := func(r string) bool { return isFenceJump(r) && !isMarkedJump(r) }
	if err := insert(plain); err != nil {
		return err
	}
	if err := removeAll(marked, isMarkedJump); err != nil {
		return err
	}
	if err := insert(marked); err != nil {
		return err
	}
	return removeAll(plain, isPlain)
}

// PutFencesFirst puts every node's egress fence back first in OUTPUT and FORWARD (IPv4 and IPv6),
// as create and reuse do, waiting at most a second a node for kube-proxy: for a running cluster
// whose fence was displaced.
func (c *Cluster) PutFencesFirst(ctx context.Context) error {
	for _, n := range c.nodes() {
		if err := c.fenceFirst(ctx, n, time.Second); err != nil {
			return err
		}
	}
	return nil
}

// checkFence refuses a cluster with a node that is not fenced.
func (c *Cluster) checkFence(ctx context.Context) error {
	sts, err := c.Fences(ctx)
	if err != nil {
		return err
	}
	for _, st := range sts {
		if !st.EndsInReject || st.OutputPos == 0 || st.ForwardPos == 0 || st.Output6Pos == 0 || st.Forward6Pos == 0 {
			return fmt.Errorf("node %s has no egress fence (chain %s ending in REJECT, jumped to from OUTPUT and FORWARD): refusing to use it", st.Node, FenceChain)
		}
	}
	return nil
}

// checkFenceFirst refuses a cluster with a node whose egress fence is not the first rule of OUTPUT
// and FORWARD, in IPv4 and IPv6.
func (c *Cluster) checkFenceFirst(ctx context.Context) error {
	sts, err := c.Fences(ctx)
	if err != nil {
		return err
	}
	for _, st := range sts {
		if !st.First() {
			return fmt.Errorf("node %s: the egress fence (chain %s) is rule #%d of OUTPUT and #%d of FORWARD (IPv6: #%d, #%d), ends in REJECT: %v; want the first everywhere: refusing to use it",
				st.Node, FenceChain, st.OutputPos, st.ForwardPos, st.Output6Pos, st.Forward6Pos, st.EndsInReject)
		}
	}
	return nil
}

// settle waits for the cluster to be ready, then puts every node's egress fence first (kube-proxy
// has inserted its jumps above it by then) and checks that it is.
func (c *Cluster) settle(ctx context.Context, timeout time.Duration) error {
	if err := c.waitReady(ctx, timeout); err != nil {
		return err
	}
	for _, n := range c.nodes() {
		if err := c.fenceFirst(ctx, n, time.Minute); err != nil {
			return err
		}
	}
	return c.checkFenceFirst(ctx)
}

// waitReady waits until every node is Ready, CoreDNS has ready replicas and kube-proxy runs.
func (c *Cluster) waitReady(ctx context.Context, timeout time.Duration) error {
	client, err := c.Client()
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) == 0 {
			last = "no node registered yet"
			return false, nil
		}
		if len(nodes.Items) < len(c.Nodes) {
			last = fmt.Sprintf("%d of %d nodes registered", len(nodes.Items), len(c.Nodes))
			return false, nil
		}
		for _, n := range nodes.Items {
			if !nodeReady(n) {
				last = "node " + n.Name + " not Ready"
				return false, nil
			}
		}
		dns, err := client.AppsV1().Deployments("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
		if err != nil {
			last = "coredns deployment not created yet"
			return false, nil
		}
		if dns.Status.ReadyReplicas < 1 || dns.Status.ReadyReplicas < *dns.Spec.Replicas {
			last = fmt.Sprintf("coredns %d/%d ready", dns.Status.ReadyReplicas, *dns.Spec.Replicas)
			return false, nil
		}
		proxy, err := client.AppsV1().DaemonSets("kube-system").Get(ctx, "kube-proxy", metav1.GetOptions{})
		if err != nil || proxy.Status.NumberReady < proxy.Status.DesiredNumberScheduled || proxy.Status.DesiredNumberScheduled == 0 {
			last = "kube-proxy not ready"
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for cluster %q to be ready (%s): %w", c.Name, last, err)
	}
	return nil
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
