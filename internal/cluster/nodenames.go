package cluster

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// The node image points each node's resolver at the docker gateway, where nothing answers (Docker's
// embedded resolver would forward unknown names off the machine), so a worker cannot resolve the
// control plane's name, which kind makes the API server's address (`<name>-control-plane:6443`)
// for `kubeadm join` and for every kubeconfig on the node. publishNodeNames writes every node's
// name and address into the other nodes' /etc/hosts while `kind create` runs: kind starts all node
// containers first and joins the workers only after `kubeadm init` on the control plane.

// nodeAddr is a node container's name and address on the kind network.
type nodeAddr struct {
	Name string
	IP   netip.Addr
}

// hostsScript adds a line for every node of peers other than self to /etc/hosts, once.
func hostsScript(self string, peers []nodeAddr) string {
	var b strings.Builder
	for _, p := range peers {
		if p.Name != self {
			fmt.Fprintf(&b, "grep -q ' %[2]s$' /etc/hosts || echo '%[1]s %[2]s' >>/etc/hosts\n", p.IP, p.Name)
		}
	}
	return b.String()
}

// publishNodeNames waits until want node containers of the cluster run with an address, then
// writes the names into every node's /etc/hosts. It returns once done, or with ctx's error.
func (c *Cluster) publishNodeNames(ctx context.Context, want int) error {
	var nodes []nodeAddr
	for {
		var err error
		nodes, err = c.nodeAddrs(ctx)
		if err == nil && len(nodes) == want {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %d running node containers (have %d, %v): %w", want, len(nodes), err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	for _, n := range nodes {
		if _, err := c.NodeExecOn(ctx, n.Name, "sh", "-c", hostsScript(n.Name, nodes)); err != nil {
			return fmt.Errorf("write the node names into %s's /etc/hosts: %w", n.Name, err)
		}
	}
	c.logger().Info("node names published", "nodes", len(nodes))
	return nil
}

// nodeAddrs lists the cluster's running node containers that have an IPv4 address.
func (c *Cluster) nodeAddrs(ctx context.Context) ([]nodeAddr, error) {
	out, err := runCmd(ctx, nil, "docker", "ps", "--filter", "label=io.x-k8s.kind.cluster="+c.Name, "--format", "{{.Names}}")
	if err != nil {
		return nil, err
	}
	names := strings.Fields(string(out))
	if len(names) == 0 {
		return nil, nil
	}
	out, err = runCmd(ctx, nil, "docker", append([]string{"inspect", "-f", "{{.Name}} {{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}"}, names...)...)
	if err != nil {
		return nil, err
	}
	var nodes []nodeAddr
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		ip, err := netip.ParseAddr(f[1])
		if err != nil || !ip.Is4() {
			continue
		}
		nodes = append(nodes, nodeAddr{Name: strings.TrimPrefix(f[0], "/"), IP: ip})
	}
	slices.SortFunc(nodes, func(a, b nodeAddr) int { return strings.Compare(a.Name, b.Name) })
	return nodes, nil
}
