package oracle

import (
	"fmt"
	"time"
)

// Node lifecycle defaults, used when the cluster does not state its own (a managed control plane
// hides kube-controller-manager's flags).
const (
	// DefaultNodeMonitorGracePeriod is kube-controller-manager's --node-monitor-grace-period since
	// Kubernetes 1.32 (40 s before).
	DefaultNodeMonitorGracePeriod = 50 * time.Second
	// LegacyNodeMonitorGracePeriod is its default before 1.32.
	LegacyNodeMonitorGracePeriod = 40 * time.Second
	// DefaultNodeMonitorPeriod is --node-monitor-period: how often the controller checks nodes.
	DefaultNodeMonitorPeriod = 5 * time.Second
	// DefaultNodeLeaseDuration is a node Lease's leaseDurationSeconds; kubelet renews it every
	// quarter of that.
	DefaultNodeLeaseDuration = 40 * time.Second
)

// Params under which a node fault records the cluster's node-health timing on the timeline.
const (
	ParamNodeGrace   = "node-monitor-grace-period"
	ParamNodeMonitor = "node-monitor-period"
	ParamNodeLease   = "node-lease-duration"
	ParamNodeSource  = "node-timing-source"
)

// NodeHealth is how the node lifecycle controller decides that a node is gone: kubelet renews its
// Lease every LeaseDuration/4; the controller checks every MonitorPeriod and marks a node whose
// last renewal it saw more than GracePeriod ago as not ready (Unknown), and then its pods
// Ready=false, which withdraws their endpoints.
type NodeHealth struct {
	GracePeriod   time.Duration `json:"gracePeriod"`
	MonitorPeriod time.Duration `json:"monitorPeriod"`
	LeaseDuration time.Duration `json:"leaseDuration"`
	// Source says where the values came from ("kube-controller-manager flags, node Lease", or the
	// defaults assumed).
	Source string `json:"source"`
}

// RenewInterval is how often kubelet renews its node Lease.
func (h NodeHealth) RenewInterval() time.Duration { return h.LeaseDuration / 4 }

// LossWindow is when the endpoints of a lost node's pods go ready=false, counted from the instant
// the node stopped: the last renewal the controller saw was up to one renew interval before, so
// not before GracePeriod − renew interval; and it notices at its next check, so by GracePeriod +
// MonitorPeriod; propagation (pod status → EndpointSlice) is the allowance.
func (h NodeHealth) LossWindow(propagation time.Duration) Window {
	return Window{
		Min:           max(h.GracePeriod-h.RenewInterval(), 0),
		Max:           h.GracePeriod + h.MonitorPeriod,
		Allowance:     propagation,
		AllowanceNote: "propagation",
		Explain: fmt.Sprintf("node-monitor-grace-period %s − lease renew interval %s (lease %s / 4), to grace + node-monitor-period %s (%s)",
			h.GracePeriod, h.RenewInterval(), h.LeaseDuration, h.MonitorPeriod, h.Source),
	}
}

// Params is h as a fault records it on the timeline.
func (h NodeHealth) Params() map[string]string {
	return map[string]string{
		ParamNodeGrace: h.GracePeriod.String(), ParamNodeMonitor: h.MonitorPeriod.String(),
		ParamNodeLease: h.LeaseDuration.String(), ParamNodeSource: h.Source,
	}
}

// NodeHealthFromParams reads what Params wrote.
func NodeHealthFromParams(p map[string]string) (NodeHealth, error) {
	var h NodeHealth
	for _, f := range []struct {
		name string
		to   *time.Duration
	}{{ParamNodeGrace, &h.GracePeriod}, {ParamNodeMonitor, &h.MonitorPeriod}, {ParamNodeLease, &h.LeaseDuration}} {
		v, ok := p[f.name]
		if !ok {
			return NodeHealth{}, fmt.Errorf("no %s recorded", f.name)
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return NodeHealth{}, fmt.Errorf("%s %q: not a positive duration", f.name, v)
		}
		*f.to = d
	}
	h.Source = p[ParamNodeSource]
	return h, nil
}
