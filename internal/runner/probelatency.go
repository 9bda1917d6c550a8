package runner

import (
	"context"
	"slices"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/observers/kubeletprobes"
)

// probeLatencyTimeout bounds the read of the kubelets' probe metrics.
const probeLatencyTimeout = 10 * time.Second

// recordProbeLatency reads, at the run's end, how long kubelet's probes of the target's pods took
// (package observers/kubeletprobes) and puts each container's histogram on the timeline. It never
// fails the run: without it, tune leaves the readiness timeout alone and says why.
func (s *scenarioRun) recordProbeLatency(ctx context.Context) {
	if s.r.Conn == nil || s.r.Conn.Client == nil || s.target == nil {
		return
	}
	var nodes []string
	for _, e := range s.tl.Filter(timeline.KindEndpoint) {
		if e.Endpoint != nil && e.Endpoint.Node != "" {
			nodes = append(nodes, e.Endpoint.Node)
		}
	}
	if s.pod != nil && s.pod.Spec.NodeName != "" {
		nodes = append(nodes, s.pod.Spec.NodeName)
	}
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	if len(nodes) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, probeLatencyTimeout)
	defer cancel()
	hs, err := kubeletprobes.Scrape(ctx, s.r.Conn.Client, nodes, s.target.Namespace)
	if err != nil {
		s.log.Warn("no probe latency: tune cannot size the readiness timeout", "err", err)
	}
	_, now := s.tl.Now()
	in := timeline.IncarnationsOf(s.tl.Entries())
	for _, h := range hs {
		l := h.Latency
		s.tl.Append(timeline.Entry{Kind: timeline.KindProbeLatency, Pod: in.KeyAt(h.Pod, now), Latency: &l})
	}
}
