package runner

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/loadgen"
	"github.com/probegate/probegate/observers/conntrack"
)

// attributionEnv selects how requests are tied to pods: "" (conntrack whenever the node can be
// reached, beside the pod header), "header" (the header only, load through 127.0.0.1), or
// "conntrack-only" (the header is ignored, as for an app that sends none: for measuring).
const attributionEnv = "PROBEGATE_ATTRIBUTION"

// connAttribution ties requests to pods through the kind node's conntrack table (package
// observers/conntrack): the load goes to the node's IP and NodePort instead of the 127.0.0.1 port
// Docker's userland proxy publishes, because that proxy hides the client's port from the node.
// A nil *connAttribution does nothing: the load goes where it did and only the header counts.
type connAttribution struct {
	watcher      *conntrack.Watcher
	fromURL      string // the target's loopback base URL
	nodeURL      string // the same NodePort on the node's own address
	nodeIP       string
	ignoreHeader bool
	log          *slog.Logger
}

// startAttribution starts conntrack attribution for target when the node can be reached (kind)
// and the target's URL is a published NodePort. It never fails the run: without it, requests are
// attributed by the header alone and the coverage gate judges what that gives.
func (r *Runner) startAttribution(ctx context.Context, t *deploy.Target, log *slog.Logger) *connAttribution {
	mode := os.Getenv(attributionEnv)
	// In-cluster load reaches the target through its ClusterIP from pods, not the node's NodePort.
	if mode == "header" || r.Opts.LoadAgents > 0 || r.kit.nodeExec == nil || r.Conn == nil || r.Conn.Client == nil {
		return nil
	}
	a, err := r.newConnAttribution(ctx, t, log)
	if err != nil {
		log.Warn("no conntrack attribution: requests are tied to pods only by a response header", "err", err)
		return nil
	}
	a.ignoreHeader = mode == "conntrack-only"
	return a
}

func (r *Runner) newConnAttribution(ctx context.Context, t *deploy.Target, log *slog.Logger) (*connAttribution, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("target URL %q: %w", t.URL, err)
	}
	hostPort, err := strconv.Atoi(u.Port())
	if err != nil {
		return nil, fmt.Errorf("target URL %q: no port", t.URL)
	}
	var nodePort int32
	for _, m := range cluster.PortMappings {
		if m.HostPort == hostPort {
			nodePort = m.NodePort
		}
	}
	if nodePort == 0 {
		return nil, fmt.Errorf("target URL %q: port %d publishes no known NodePort", t.URL, hostPort)
	}
	nodeIP, err := r.nodeAddress(ctx)
	if err != nil {
		return nil, err
	}
	svc := netip.AddrPortFrom(nodeIP, uint16(nodePort))
	w, err := conntrack.Start(ctx, conntrack.Exec(r.kit.nodeExec), svc, log)
	if err != nil {
		return nil, err
	}
	node := *u
	node.Host = svc.String()
	return &connAttribution{watcher: w, fromURL: strings.TrimSuffix(t.URL, "/"), nodeURL: strings.TrimSuffix(node.String(), "/"),
		nodeIP: nodeIP.String(), log: log}, nil
}

// nodeAddress is the ingress node's InternalIP: on kind, the control plane's address on its docker
// network, the one address besides loopback the load may go to. Its conntrack table records the
// DNAT of every request to whichever node's pod serves it.
func (r *Runner) nodeAddress(ctx context.Context) (netip.Addr, error) {
	nodes, err := r.Conn.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return netip.Addr{}, fmt.Errorf("list nodes: %w", err)
	}
	n, err := ingressNode(nodes.Items, r.kit.ingressNode)
	if err != nil {
		return netip.Addr{}, err
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			ip, err := netip.ParseAddr(a.Address)
			if err != nil {
				return netip.Addr{}, fmt.Errorf("node %s InternalIP %q: %w", n.Name, a.Address, err)
			}
			return ip, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("node %s has no InternalIP", n.Name)
}

// ingressNode returns the node named name, or, when name is empty, the one node or else the one
// control-plane node.
func ingressNode(nodes []corev1.Node, name string) (*corev1.Node, error) {
	var found []*corev1.Node
	for i, n := range nodes {
		_, cp := n.Labels["node-role.kubernetes.io/control-plane"]
		if n.Name == name || (name == "" && (len(nodes) == 1 || cp)) {
			found = append(found, &nodes[i])
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case name != "":
		return nil, fmt.Errorf("no node %s among %d nodes: conntrack attribution reads the ingress node", name, len(nodes))
	default:
		return nil, fmt.Errorf("%d nodes, %d of them control planes: conntrack attribution reads the one ingress node", len(nodes), len(found))
	}
}

// loadSpec points spec at the node's NodePort and sets the header switch.
func (a *connAttribution) loadSpec(spec loadSpec) loadSpec {
	if a == nil {
		return spec
	}
	if rest, ok := strings.CutPrefix(spec.URL, a.fromURL); ok {
		spec.URL = a.nodeURL + rest
		spec.AllowHost = a.nodeIP
	}
	spec.IgnorePodHeader = spec.IgnorePodHeader || a.ignoreHeader
	return spec
}

// apply stops the watch and names the pod of every request that conntrack can attribute and the
// header did not; the returned summary is the scenario's attribution (nil without conntrack, when
// the report computes it from the requests).
func (a *connAttribution) apply(reqs []timeline.Request, entries []timeline.Entry) ([]timeline.Request, *timeline.Attribution) {
	if a == nil {
		return reqs, nil
	}
	flows, err := a.watcher.Stop()
	if err != nil {
		a.log.Warn("conntrack watch", "err", err)
	}
	out, ct := conntrack.Attribute(reqs, flows, entries)
	sum := timeline.AttributionOf(out)
	sum.Conntrack = &ct
	a.log.Info("request attribution", "coverage", sum.Coverage, "byHeader", sum.ByHeader, "byConntrack", sum.ByConntrack,
		"conntrackCoverage", ct.Coverage, "agreement", ct.Agreement, "compared", ct.Compared, "flows", ct.Flows)
	return out, &sum
}

// stop ends the watch if apply did not (an error or interrupt before the load ended).
func (a *connAttribution) stop() {
	if a != nil {
		a.watcher.Stop()
	}
}

// requestLister is a running load that can list the requests it has recorded so far.
type requestLister interface{ all() []timeline.Request }

// flowLister lists the node's conntrack flows for the target's NodePort now.
type flowLister interface {
	List(ctx context.Context) ([]conntrack.Flow, error)
}

// liveTally ranks the pods for a "busiest" pod choice by the node's conntrack when the load's own
// requests name no pod (an app with no pod header): the requests so far are attributed against
// the flows the node's table holds now.
type liveTally struct {
	loadRun
	flows flowLister
	tl    *timeline.Timeline
	log   *slog.Logger
}

// tallied wraps load for the faults that rank pods by it, when conntrack attribution runs.
func tallied(load loadRun, attr *connAttribution, tl *timeline.Timeline) loadRun {
	if attr == nil {
		return load
	}
	if _, ok := load.(requestLister); !ok {
		return load
	}
	t := liveTally{loadRun: load, flows: attr.watcher, tl: tl, log: attr.log}
	if _, ok := load.(faults.LoadMeter); ok {
		return meteredTally{t} // the overload's proof still reads the load's counts
	}
	return t
}

// meteredTally is a liveTally over a load that reports its counts.
type meteredTally struct{ liveTally }

// Counts is the load's own tally.
func (t meteredTally) Counts() loadgen.Counts { return t.loadRun.(faults.LoadMeter).Counts() }

// listTimeout bounds the conntrack listing a pod choice waits for.
const listTimeout = 5 * time.Second

// ServedBy counts the requests so far by the pod that served them: the load's own count when its
// requests name pods, else conntrack's attribution of them (empty when the node cannot be read).
func (t liveTally) ServedBy() map[string]uint64 {
	if pt, ok := t.loadRun.(faults.PodTally); ok {
		if by := pt.ServedBy(); len(by) > 0 {
			return by
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	flows, err := t.flows.List(ctx)
	if err != nil && len(flows) == 0 {
		t.log.Warn("busiest pod: conntrack listing", "err", err)
		return nil
	}
	reqs, _ := conntrack.Attribute(t.loadRun.(requestLister).all(), flows, t.tl.Entries())
	out := map[string]uint64{}
	for _, q := range reqs {
		if q.Pod != "" {
			out[q.Pod]++
		}
	}
	return out
}
