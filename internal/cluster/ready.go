package cluster

import (
	"context"
	"fmt"
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
	// FORWARD (0: missing). The entrypoint puts it first; kube-proxy later inserts its own jumps
	// above it, none of which accept new outbound traffic.
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
