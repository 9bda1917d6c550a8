package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The pod network replaces kindnetd, whose module cannot be had offline, with a static set-up per
// node done once after `kind create`: kind nodes never change. Each node gets a route to every
// other node's podCIDR through that node's InternalIP (the nodes share the docker network `kind`),
// a nat chain that masquerades pod traffic leaving the cluster CIDR (to the docker gateway, the
// node's DNS) and nothing else, so pod source addresses are kept between nodes, and last a bridge
// CNI config for its own podCIDR: containerd reloads it on the rename and the kubelet reports the
// node Ready within its 5 s runtime poll.

const (
	// MasqChain is the nat chain that masquerades pod traffic leaving the cluster CIDR.
	MasqChain = "PROBEGATE-MASQ"
	// cniConf is the node's CNI config, written atomically (a rename) once the routes and the
	// masquerade are in place.
	cniConf = "/etc/cni/net.d/10-probegate.conflist"
)

// nodeNet is one node's share of the pod network.
type nodeNet struct {
	Name       string
	PodCIDR    netip.Prefix
	InternalIP netip.Addr
}

// waitNodeNets waits until the API lists want Nodes, each with a podCIDR inside podSubnet and an
// InternalIP, and returns them sorted by name. The controller-manager assigns a podCIDR as a Node
// registers, Ready or not; workers join concurrently, so which /24 a node gets is read, never assumed.
func (c *Cluster) waitNodeNets(ctx context.Context, podSubnet netip.Prefix, want int, timeout time.Duration) ([]nodeNet, error) {
	client, err := c.Client()
	if err != nil {
		return nil, err
	}
	var nets []nodeNet
	last := "no node registered yet"
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			last = "list nodes: " + err.Error()
			return false, nil
		}
		nets, last, err = nodeNetsOf(nodes.Items, podSubnet, want)
		if err != nil {
			return false, err
		}
		return last == "", nil
	})
	if err != nil {
		return nil, fmt.Errorf("wait for %d nodes with a podCIDR (%s): %w", want, last, err)
	}
	return nets, nil
}

// nodeNetsOf returns the pod network of nodes, or why it is not complete yet (want nodes, each
// with a podCIDR and an InternalIP). A podCIDR outside podSubnet or shared by two nodes is an error.
func nodeNetsOf(nodes []corev1.Node, podSubnet netip.Prefix, want int) ([]nodeNet, string, error) {
	if len(nodes) < want {
		return nil, fmt.Sprintf("%d of %d nodes registered", len(nodes), want), nil
	}
	var nets []nodeNet
	for _, n := range nodes {
		nn := nodeNet{Name: n.Name}
		if n.Spec.PodCIDR == "" {
			return nil, "node " + n.Name + " has no podCIDR yet", nil
		}
		p, err := netip.ParsePrefix(n.Spec.PodCIDR)
		if err != nil || !podSubnet.Contains(p.Addr()) || p.Bits() < podSubnet.Bits() {
			return nil, "", fmt.Errorf("node %s: podCIDR %q is not inside the cluster's pod subnet %s", n.Name, n.Spec.PodCIDR, podSubnet)
		}
		nn.PodCIDR = p.Masked()
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is4() {
					nn.InternalIP = ip
				}
			}
		}
		if !nn.InternalIP.IsValid() {
			return nil, "node " + n.Name + " has no IPv4 InternalIP yet", nil
		}
		for _, o := range nets {
			if o.PodCIDR.Overlaps(nn.PodCIDR) {
				return nil, "", fmt.Errorf("nodes %s and %s have overlapping podCIDRs %s and %s", o.Name, nn.Name, o.PodCIDR, nn.PodCIDR)
			}
		}
		nets = append(nets, nn)
	}
	slices.SortFunc(nets, func(a, b nodeNet) int { return strings.Compare(a.Name, b.Name) })
	return nets, "", nil
}

// podNetScript is the shell script that sets up self's pod network, given every node's: routes to
// the other nodes' podCIDRs, the masquerade chain for traffic leaving podSubnet, then the CNI
// config, written to a hidden temporary file and renamed (containerd loads only *.conf, *.conflist
// and *.json, and reloads on the rename). Every step is idempotent.
func podNetScript(self nodeNet, all []nodeNet, podSubnet netip.Prefix) (string, error) {
	conf, err := cniConfig(self.PodCIDR)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("set -e\n")
	for _, o := range all {
		if o.Name != self.Name {
			fmt.Fprintf(&b, "ip route replace %s via %s\n", o.PodCIDR, o.InternalIP)
		}
	}
	ipt := "iptables -w -t nat"
	fmt.Fprintf(&b, "%s -N %s 2>/dev/null || true\n", ipt, MasqChain)
	for _, rule := range []string{
		fmt.Sprintf("%s -d %s -j RETURN", MasqChain, podSubnet),
		fmt.Sprintf("%s -j MASQUERADE", MasqChain),
		fmt.Sprintf("POSTROUTING -m addrtype ! --dst-type LOCAL -j %s", MasqChain),
	} {
		fmt.Fprintf(&b, "%s -C %s 2>/dev/null || %s -A %s\n", ipt, rule, ipt, rule)
	}
	tmp := strings.TrimSuffix(cniConf, "10-probegate.conflist") + ".10-probegate.conflist.tmp"
	fmt.Fprintf(&b, "printf '%%s\\n' '%s' >%s\n", conf, tmp)
	fmt.Fprintf(&b, "mv -f %s %s\n", tmp, cniConf)
	return b.String(), nil
}

// cniConfig is the node's CNI config: a bridge with the node as the pods' gateway, host-local
// addresses from podCIDR, no masquerade of its own (the masquerade chain keeps pod addresses
// between nodes), hairpin so a pod reaches itself through its Service, and portmap.
func cniConfig(podCIDR netip.Prefix) (string, error) {
	type obj = map[string]any
	conf := obj{
		"cniVersion": "1.0.0",
		"name":       "probegate",
		"plugins": []obj{
			{
				"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
				"ipam": obj{
					"type":   "host-local",
					"ranges": [][]obj{{{"subnet": podCIDR.String()}}},
					"routes": []obj{{"dst": "0.0.0.0/0"}},
				},
			},
			{"type": "portmap", "capabilities": obj{"portMappings": true}},
		},
	}
	data, err := json.Marshal(conf)
	if err != nil {
		return "", fmt.Errorf("CNI config: %w", err)
	}
	if strings.Contains(string(data), "'") {
		return "", fmt.Errorf("CNI config %s: unexpected quote", data)
	}
	return string(data), nil
}

// setupPodNet waits for every node's podCIDR, puts each node's egress fence first once kube-proxy
// has programmed it (before any pod can start there), and then sets up each node's pod network.
func (c *Cluster) setupPodNet(ctx context.Context, podSubnet netip.Prefix, timeout time.Duration) error {
	nets, err := c.waitNodeNets(ctx, podSubnet, len(c.Nodes), timeout)
	if err != nil {
		return err
	}
	for _, n := range nets {
		if !slices.Contains(c.Nodes, n.Name) {
			return fmt.Errorf("node %s is not one of the cluster's node containers %v", n.Name, c.Nodes)
		}
	}
	// Nodes are set up side by side: each waits for its own kube-proxy.
	errs := make([]error, len(nets))
	var wg sync.WaitGroup
	for i, n := range nets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.setupNodeNet(ctx, n, nets, podSubnet)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// setupNodeNet puts one node's fence first once its kube-proxy has programmed it, then sets up its
// pod network.
func (c *Cluster) setupNodeNet(ctx context.Context, n nodeNet, nets []nodeNet, podSubnet netip.Prefix) error {
	if err := c.fenceFirst(ctx, n.Name, time.Minute); err != nil {
		return err
	}
	script, err := podNetScript(n, nets, podSubnet)
	if err != nil {
		return err
	}
	if _, err := c.NodeExecOn(ctx, n.Name, "sh", "-c", script); err != nil {
		return fmt.Errorf("set up the pod network on node %s: %w", n.Name, err)
	}
	c.logger().Info("podnet", "node", n.Name, "podCIDR", n.PodCIDR, "routes", len(nets)-1)
	return nil
}
