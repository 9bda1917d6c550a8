package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/seed"
)

// nodeParam names the node a node fault acts on (see NodeChoice).
var nodeParam = Param{Name: "node", Kind: KindString, Doc: "busiest (default: the node running the most of the target's pods) or a node name"}

// NodeBusiest is the node choice "the node running the most of the target's pods".
const NodeBusiest = "busiest"

// labelControlPlane marks a control-plane node (kubeadm and kind set it).
const labelControlPlane = "node-role.kubernetes.io/control-plane"

// NodeChoice says which node a node fault acts on: the named Node, or the node running the most of
// the target's running pods (Selector in Namespace), a seeded draw among ties. Control-plane nodes
// are never chosen by "busiest". With Alone, a node that also runs other pods of the namespace (the
// target's dependencies, load agents; not a DaemonSet's, which run everywhere) is passed over: losing it would be a dependency outage too,
// and the fault would no longer test the target alone.
type NodeChoice struct {
	Client    kubernetes.Interface
	Namespace string
	Selector  string
	Node      string
	Rand      *seed.Source
	Alone     bool
}

// NodeTarget is a chosen node and the target's pods on it, by name (sorted).
type NodeTarget struct {
	Node string
	Pods []string
	// How says how the node was chosen, in words.
	How string
}

// Choose returns the node to act on now and the target's pods running there.
func (c NodeChoice) Choose(ctx context.Context) (NodeTarget, error) {
	list, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return NodeTarget{}, fmt.Errorf("list pods in %s: %w", c.Namespace, err)
	}
	match, err := labels.Parse(c.Selector)
	if err != nil {
		return NodeTarget{}, fmt.Errorf("target selector %q: %w", c.Selector, err)
	}
	target := map[string][]string{} // node → the target's running pods there
	others := map[string][]string{} // node → the namespace's other pods there
	for i := range list.Items {
		p := &list.Items[i]
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		switch {
		case match.Matches(labels.Set(p.Labels)):
			target[p.Spec.NodeName] = append(target[p.Spec.NodeName], p.Name)
		case daemon(p):
			// A DaemonSet's pod (probegate's node agent) runs on every node: no node is without it.
		default:
			others[p.Spec.NodeName] = append(others[p.Spec.NodeName], p.Name)
		}
	}
	if c.Node != "" && c.Node != NodeBusiest {
		return c.named(ctx, target[c.Node])
	}
	controlPlanes, err := c.controlPlanes(ctx)
	if err != nil {
		return NodeTarget{}, err
	}
	var best []string
	most := 0
	var passed []string
	for node, pods := range target {
		switch {
		case controlPlanes[node]:
			passed = append(passed, node+" (control plane)")
			continue
		case c.Alone && len(others[node]) > 0:
			slices.Sort(others[node])
			passed = append(passed, fmt.Sprintf("%s (also runs %s)", node, strings.Join(others[node], ", ")))
			continue
		}
		switch {
		case len(pods) > most:
			best, most = []string{node}, len(pods)
		case len(pods) == most:
			best = append(best, node)
		}
	}
	if len(best) == 0 {
		slices.Sort(passed)
		if len(passed) == 0 {
			return NodeTarget{}, fmt.Errorf("no running pod matches %q in %s", c.Selector, c.Namespace)
		}
		return NodeTarget{}, &NoNodeError{Passed: passed}
	}
	slices.Sort(best)
	rnd := c.Rand
	if rnd == nil {
		rnd = seed.New(0)
	}
	node := best[0]
	if len(best) > 1 {
		node = rnd.Pick(best)
	}
	pods := target[node]
	slices.Sort(pods)
	how := fmt.Sprintf("busiest: runs %d of the target's pods", len(pods))
	if len(best) > 1 {
		how += fmt.Sprintf(", drawn among %d such nodes", len(best))
	}
	return NodeTarget{Node: node, Pods: pods, How: how}, nil
}

// daemon reports whether a DaemonSet owns p.
func daemon(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}

// named checks that the named node exists and returns it with the target's pods on it.
func (c NodeChoice) named(ctx context.Context, pods []string) (NodeTarget, error) {
	n, err := c.Client.CoreV1().Nodes().Get(ctx, c.Node, metav1.GetOptions{})
	if err != nil {
		return NodeTarget{}, fmt.Errorf("get node %s: %w", c.Node, err)
	}
	if _, cp := n.Labels[labelControlPlane]; cp {
		return NodeTarget{}, fmt.Errorf("node %s runs the control plane: probegate does not take it away", c.Node)
	}
	slices.Sort(pods)
	return NodeTarget{Node: c.Node, Pods: pods, How: "named"}, nil
}

// controlPlanes returns the names of the control-plane nodes.
func (c NodeChoice) controlPlanes(ctx context.Context) (map[string]bool, error) {
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: labelControlPlane})
	if err != nil {
		return nil, fmt.Errorf("list control-plane nodes: %w", err)
	}
	out := map[string]bool{}
	for _, n := range nodes.Items {
		out[n.Name] = true
	}
	return out, nil
}

// NoNodeError says that every node running the target's pods was passed over, and why.
type NoNodeError struct{ Passed []string }

func (e *NoNodeError) Error() string {
	return "no node runs the target's pods alone: " + strings.Join(e.Passed, "; ")
}
