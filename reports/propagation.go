package reports

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// NodePropagation is how long one node's kube-proxy took to stop routing new connections to an
// endpoint after the EndpointSlice withdrew it, over the run's withdrawals: each node follows the
// slices on its own, so a lagging node shows here while the others look prompt.
type NodePropagation struct {
	Node    string `json:"node"`
	Ingress bool   `json:"ingress,omitempty"` // the node the host load enters through
	// Withdrawals counts the withdrawals this node was seen to follow; Missed those it was not
	// (still routing when the endpoint came back or the run ended).
	Withdrawals int           `json:"withdrawals"`
	Missed      int           `json:"missed,omitempty"`
	Median      time.Duration `json:"median"`
	Max         time.Duration `json:"max"`
}

// propagation measures each node's kube-proxy lag from the routing entries (one watch per node)
// against the endpoint withdrawals (in rotation → out) of the same pods. Nil without routing entries.
func propagation(entries []timeline.Entry) []NodePropagation {
	type removal struct {
		pod string
		t   time.Duration
	}
	byNode := map[string][]removal{}
	ingress := map[string]bool{}
	var nodes []string
	for _, e := range entries {
		if e.Kind != timeline.KindRouting || e.Routing == nil {
			continue
		}
		n := e.Routing.Node
		if _, seen := byNode[n]; !seen {
			nodes = append(nodes, n)
			byNode[n] = nil
		}
		ingress[n] = e.Routing.AtIngress()
		if !e.Routing.Routed && e.Pod != "" {
			byNode[n] = append(byNode[n], removal{e.Pod, e.T})
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	slices.Sort(nodes)
	ws := timeline.Endpoints(entries).Withdrawals()
	if len(ws) == 0 {
		return nil
	}
	out := make([]NodePropagation, 0, len(nodes))
	for _, n := range nodes {
		np := NodePropagation{Node: n, Ingress: ingress[n]}
		var lags []time.Duration
		for _, w := range ws {
			found := false
			for _, r := range byNode[n] {
				if r.pod == w.Pod && r.t >= w.From.T-timeline.WatchLag && r.t < w.Back {
					lags = append(lags, max(r.t-w.From.T, 0))
					found = true
					break
				}
			}
			if !found {
				np.Missed++
			}
		}
		np.Withdrawals = len(lags)
		if len(lags) > 0 {
			slices.Sort(lags)
			np.Median, np.Max = lags[len(lags)/2], lags[len(lags)-1]
		}
		out = append(out, np)
	}
	return out
}

// propagationLine is the terminal's one line on kube-proxy lag per node ("" with one node or none).
func propagationLine(ps []NodePropagation) string {
	if len(ps) < 2 {
		return ""
	}
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		name := p.Node
		if p.Ingress {
			name += " (ingress)"
		}
		w := fmt.Sprintf("%s median %s max %s over %d", name, Millis(p.Median), Millis(p.Max), p.Withdrawals)
		if p.Missed > 0 {
			w += fmt.Sprintf(", %d not followed", p.Missed)
		}
		parts = append(parts, w)
	}
	return "kube-proxy after a withdrawal: " + strings.Join(parts, "; ")
}
