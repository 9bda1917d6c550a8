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
	// KernelLater counts the withdrawals (ingress node only) after whose rules read the node's
	// kernel still DNAT'd new connections to the pod (conntrack): there the lag is the last such
	// connection's opening, not the read, which was early.
	KernelLater int `json:"kernelLater,omitempty"`
}

// propagation measures each node's kube-proxy lag from the routing entries (one watch per node)
// against the endpoint withdrawals (in rotation → out) of the same pods, on the ingress node held
// against its kernel's own routing of the load's new connections (reqs). Nil without routing entries.
func propagation(entries []timeline.Entry, reqs []timeline.Request) []NodePropagation {
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
					lag := max(r.t-w.From.T, 0)
					if np.Ingress {
						if last, ok := kernelLast(reqs, w.Pod, r.t, w.Back); ok {
							lag = last - w.From.T
							np.KernelLater++
						}
					}
					lags = append(lags, lag)
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

// kernelLast is the opening of the latest new connection the kernel DNAT'd to pod (a request with
// a conntrack flow, dated by its connection's opening) in (after, before); found false when none.
func kernelLast(reqs []timeline.Request, pod string, after, before time.Duration) (last time.Duration, found bool) {
	for _, q := range reqs {
		kernelPod, opened, ok := q.KernelRouted()
		if !ok || opened <= after || opened >= before {
			continue
		}
		if kernelPod == pod && opened > last {
			last, found = opened, true
		}
	}
	return last, found
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
		if p.KernelLater > 0 {
			w += fmt.Sprintf(", %d later than its rules showed (the kernel's own routing, conntrack)", p.KernelLater)
		}
		parts = append(parts, w)
	}
	return "kube-proxy after a withdrawal: " + strings.Join(parts, "; ")
}

// DoorPropagation is the front door's own lag after a withdrawal (timeline.DoorLag): the hop that
// replaces kube-proxy's on the load's path when a controller keeps its own record.
type DoorPropagation = timeline.DoorLag

// doorPropagation measures the door's lag (nil when no request went through a door's record).
func doorPropagation(entries []timeline.Entry, reqs []timeline.Request) *DoorPropagation {
	return timeline.MeasureDoorLag(entries, reqs)
}

// doorLine is the terminal's line on the front door's lag ("" without one).
func doorLine(d *DoorPropagation) string {
	if d == nil {
		return ""
	}
	s := fmt.Sprintf("front door after a withdrawal: last request to the withdrawn pod median %s max %s after it, over %d withdrawals",
		Millis(d.Median), Millis(d.Max), d.Withdrawals)
	if d.Late > 0 {
		s += fmt.Sprintf(" (%d requests sent to a withdrawn pod, after %d of them)", d.Requests, d.Late)
	} else {
		s += " (none sent to a withdrawn pod)"
	}
	return s
}
