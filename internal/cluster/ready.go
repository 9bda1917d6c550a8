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

// FenceStatus is what the node's egress fence looks like.
type FenceStatus struct {
	// OutputPos and ForwardPos are the 1-based positions of the jump to the fence in OUTPUT and
	// FORWARD (0: missing). The entrypoint puts it first; kube-proxy and the kubelet then insert
	// their own jumps above it (KUBE-FORWARD accepts marked packets), so fenceFirst moves it back
	// once they have.
	OutputPos    int
	ForwardPos   int
	EndsInReject bool  // the chain's last rule REJECTs
	Rejected     int64 // packets REJECTed so far
}

// Fence reads the node's egress fence. It sends nothing anywhere: it only reads iptables.
func (c *Cluster) Fence(ctx context.Context) (FenceStatus, error) {
	var st FenceStatus
	pos := func(chain string) (int, error) {
		out, err := c.NodeExec(ctx, "iptables", "-w", "-S", chain)
		if err != nil {
			return 0, err
		}
		n := 0
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "-A "+chain+" ") {
				n++
				if strings.HasSuffix(strings.TrimSpace(l), "-j "+FenceChain) {
					return n, nil
				}
			}
		}
		return 0, nil
	}
	var err error
	if st.OutputPos, err = pos("OUTPUT"); err != nil {
		return st, fmt.Errorf("read node iptables: %w", err)
	}
	if st.ForwardPos, err = pos("FORWARD"); err != nil {
		return st, fmt.Errorf("read node iptables: %w", err)
	}
	out, err := c.NodeExec(ctx, "iptables", "-w", "-L", FenceChain, "-v", "-n", "-x")
	if err != nil {
		return st, fmt.Errorf("read fence chain: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := strings.Fields(lines[len(lines)-1])
	if len(last) >= 3 && last[2] == "REJECT" {
		st.EndsInReject = true
		fmt.Sscan(last[0], &st.Rejected)
	}
	return st, nil
}

// kubeProxyJump is the jump kube-proxy inserts at the top of OUTPUT and FORWARD, after the
// kubelet's: once both chains hold it, neither inserts again (they only check their jumps exist).
const kubeProxyJump = "-j KUBE-SERVICES"

// fenceFirst makes the jump to the fence the first rule of OUTPUT and FORWARD (IPv4 and IPv6) and
// the only one, after waiting up to within for kube-proxy to have inserted its jumps: a packet
// meets the fence before any rule that could accept it. The node is never unfenced in between.
func (c *Cluster) fenceFirst(ctx context.Context, within time.Duration) error {
	chains := []string{"OUTPUT", "FORWARD"}
	rules := func(ipt, chain string) ([]string, error) {
		out, err := c.NodeExec(ctx, ipt, "-w", "-S", chain)
		if err != nil {
			return nil, fmt.Errorf("read node %s %s: %w", ipt, chain, err)
		}
		var rs []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "-A "+chain+" ") {
				rs = append(rs, strings.TrimSpace(l))
			}
		}
		return rs, nil
	}
	deadline := time.Now().Add(within)
	for {
		missing := ""
		for _, chain := range chains {
			rs, err := rules("iptables", chain)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(rs, func(r string) bool { return strings.Contains(r, kubeProxyJump) }) {
				missing = chain + " has no " + kubeProxyJump
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			c.log.Warn("kube-proxy has not programmed the node yet; putting the egress fence first anyway", "missing", missing)
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	for _, ipt := range []string{"iptables", "ip6tables"} {
		for _, chain := range chains {
			if err := c.fenceFirstIn(ctx, ipt, chain, rules); err != nil {
				return fmt.Errorf("put the egress fence first in node %s %s: %w", ipt, chain, err)
			}
		}
	}
	return nil
}

// firstComment marks the jump fenceFirst inserts: unlike the entrypoint's plain jump, it can be
// told apart by its rule spec, so each jump is deleted by what it is, never by a rule number
// that a concurrent insert could shift.
const firstComment = "probegate-fence-first"

// fenceFirstIn makes the commented jump the first rule of one chain and the only jump to the
// fence in it; at every step at least one jump to the fence stays in the chain.
func (c *Cluster) fenceFirstIn(ctx context.Context, ipt, chain string, rules func(ipt, chain string) ([]string, error)) error {
	plain := []string{"-j", FenceChain}
	marked := []string{"-m", "comment", "--comment", firstComment, "-j", FenceChain}
	run := func(op string, spec []string, pos ...string) error {
		args := append(append([]string{ipt, "-w", op, chain}, pos...), spec...)
		_, err := c.NodeExec(ctx, args...)
		return err
	}
	rs, err := rules(ipt, chain)
	if err != nil {
		return err
	}
	first, markedAt, plainAt := jumpKinds(rs)
	if first == "marked" && len(plainAt) == 0 {
		return nil
	}
	if len(markedAt) > 0 && first != "marked" {
		// Something was inserted above the marked jump since it was put first: a plain jump on
		// top holds the fence while the marked one is taken out.
		if err := run("-I", plain, "1"); err != nil {
			return err
		}
		if err := run("-D", marked); err != nil {
			return err
		}
		first = "plain"
	}
	if first != "marked" {
		if err := run("-I", marked, "1"); err != nil {
			return err
		}
	}
	for {
		if rs, err = rules(ipt, chain); err != nil {
			return err
		}
		if _, _, plainAt = jumpKinds(rs); len(plainAt) == 0 {
			return nil
		}
		if err := run("-D", plain); err != nil {
			return err
		}
	}
}

// jumpKinds reads the jumps to the fence among rules (the "-A" lines of one chain, in order):
// what the first rule is ("marked", "plain" or ""), and the 1-based positions of each kind.
func jumpKinds(rules []string) (first string, marked, plain []int) {
	for i, r := range rules {
		if !strings.HasSuffix(r, "-j "+FenceChain) {
			continue
		}
		if strings.Contains(r, firstComment) {
			marked = append(marked, i+1)
		} else {
			plain = append(plain, i+1)
		}
	}
	switch {
	case len(marked) > 0 && marked[0] == 1:
		first = "marked"
	case len(plain) > 0 && plain[0] == 1:
		first = "plain"
	}
	return first, marked, plain
}

// checkFence refuses a cluster whose node is not fenced.
func (c *Cluster) checkFence(ctx context.Context) error {
	st, err := c.Fence(ctx)
	if err != nil {
		return err
	}
	if !st.EndsInReject || st.OutputPos == 0 || st.ForwardPos == 0 {
		return fmt.Errorf("node %s has no egress fence (chain %s ending in REJECT): refusing to use it", c.NodeContainer, FenceChain)
	}
	return nil
}

// checkFenceFirst refuses a node whose egress fence is not the first rule of OUTPUT and FORWARD.
func (c *Cluster) checkFenceFirst(ctx context.Context) error {
	st, err := c.Fence(ctx)
	if err != nil {
		return err
	}
	if !st.EndsInReject || st.OutputPos != 1 || st.ForwardPos != 1 {
		return fmt.Errorf("node %s: the egress fence (chain %s) is rule #%d of OUTPUT and #%d of FORWARD, not the first: refusing to use it",
			c.NodeContainer, FenceChain, st.OutputPos, st.ForwardPos)
	}
	return nil
}

// settle waits for the cluster to be ready, then puts the node's egress fence first (kube-proxy has
// inserted its jumps above it by then) and checks that it is.
func (c *Cluster) settle(ctx context.Context, timeout time.Duration) error {
	if err := c.waitReady(ctx, timeout); err != nil {
		return err
	}
	if err := c.fenceFirst(ctx, time.Minute); err != nil {
		return err
	}
	return c.checkFenceFirst(ctx)
}

// waitReady waits until the node is Ready, CoreDNS has ready replicas and kube-proxy runs.
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
