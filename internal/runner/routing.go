package runner

import (
	"context"
	"log/slog"
	"os"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/observers/routing"
)

// routingEnv set to "off" skips the routing watch (verdicts then use the oracle's propagation
// allowance, as on a cluster whose node cannot be reached).
const routingEnv = "PROBEGATE_ROUTING"

// routeWatch records when kube-proxy changed its routing of the target Service (package
// observers/routing), on the ingress node and, on a kind cluster with several nodes, on every other
// node too: each node's kube-proxy follows the EndpointSlices on its own, so the lag of each shows.
// A nil *routeWatch does nothing.
type routeWatch struct {
	nodes []nodeRoutes
	log   *slog.Logger
}

// nodeRoutes is the watch of one node's kube-proxy.
type nodeRoutes struct {
	node    string
	ingress bool
	w       *routing.Watcher
}

// startRouting starts the routing watch when the nodes can be reached (kind). It never fails the
// run: without it, "after withdrawal" verdicts fall back to the propagation allowance.
func (r *Runner) startRouting(ctx context.Context, t *deploy.Target, nodes []corev1.Node, log *slog.Logger) *routeWatch {
	if os.Getenv(routingEnv) == "off" || r.kit.nodeExec == nil || t.Service == "" {
		return nil
	}
	w, err := routing.Start(ctx, routing.Exec(r.kit.nodeExec), t.Namespace, t.Service, 0, log)
	if err != nil {
		log.Warn("no routing watch: verdicts use the propagation allowance for kube-proxy", "err", err)
		return nil
	}
	rw := &routeWatch{nodes: []nodeRoutes{{node: r.kit.ingressNode, ingress: true, w: w}}, log: log}
	for _, node := range r.otherNodes(nodes) {
		exec := func(ctx context.Context, args ...string) ([]byte, error) { return r.kit.nodeExecOn(ctx, node, args...) }
		w, err := routing.Start(ctx, exec, t.Namespace, t.Service, 0, log)
		if err != nil {
			log.Warn("no routing watch on this node", "node", node, "err", err)
			continue
		}
		rw.nodes = append(rw.nodes, nodeRoutes{node: node, w: w})
	}
	return rw
}

// otherNodes are the names of nodes but the ingress node, when each can be reached.
func (r *Runner) otherNodes(nodes []corev1.Node) []string {
	if r.kit.nodeExecOn == nil || r.kit.ingressNode == "" {
		return nil
	}
	var out []string
	for _, n := range nodes {
		if n.Name != r.kit.ingressNode {
			out = append(out, n.Name)
		}
	}
	return out
}

// record stops the watches and appends one timeline entry per routing change, naming the node and
// the pod that had the address then. A watch that read nothing records nothing.
func (rw *routeWatch) record(tl *timeline.Timeline) {
	if rw == nil {
		return
	}
	book := timeline.Addresses(tl.Entries())
	for _, n := range rw.nodes {
		snaps, err := n.w.Stop()
		if err != nil {
			rw.log.Warn("routing watch", "node", n.node, "err", err)
		}
		for _, c := range routing.Changes(snaps) {
			t := tl.Since(c.At)
			e := timeline.Entry{At: c.At, T: t, Kind: timeline.KindRouting, Pod: book.PodAt(c.Addr, t),
				Routing: &timeline.RoutingChange{Address: c.Addr.String(), Routed: c.Routed, Node: n.node, Ingress: n.ingress}}
			if !c.Since.IsZero() {
				e.Routing.Since = tl.Since(c.Since)
			}
			tl.Append(e)
		}
	}
}

// stop ends the watches if record did not.
func (rw *routeWatch) stop() {
	if rw == nil {
		return
	}
	for _, n := range rw.nodes {
		n.w.Stop()
	}
}
