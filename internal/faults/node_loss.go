package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
)

// TypeNodeLoss stops a whole node.
const TypeNodeLoss = "node-loss"

func init() {
	Register(Definition{
		Type: TypeNodeLoss,
		Doc: "stops a worker node running the target's pods (and none of its dependencies or load agents): on kind its whole " +
			"container is paused (kubelet, kube-proxy and pods at once, as when a machine hangs), elsewhere its kubelet is " +
			"stopped through the node agent (the control plane loses the node, its pods keep running); resumes it on revert",
		Params:   []Param{nodeParam},
		Needs:    []Capability{NeedsNodes, NeedsNodePause},
		Proof:    "the node's Lease stops being renewed after the freeze",
		Explains: nil, // the pods keep running: nothing restarts them
		Build: func(a Args) (Fault, error) {
			env := a.Env
			choice := NodeChoice{Client: env.Client, Namespace: env.Namespace, Selector: env.Selector, Rand: a.Pods.Rand, Alone: true}
			choice.Node, _ = a.Param("node")
			f := NewNodeLoss(a.Rec, choice, env.PauseNode)
			if env.PauseHow != "" {
				f.How = env.PauseHow
			}
			return f, nil
		},
	})
}

// NodeLoss freezes a whole node with Pause (docker pause of a kind node container): the node stops
// renewing its Lease, and after the cluster's node-monitor-grace-period the node lifecycle controller
// marks it and its pods not ready, which withdraws their endpoints. The cluster's timing
// (oracle.NodeHealth) is read when the fault starts and recorded with it, for the verdict's window.
// Proof of effect: the node's Lease is not renewed after the freeze. Revert resumes the node.
type NodeLoss struct {
	Recorder
	state
	Choice NodeChoice
	Pause  func(ctx context.Context, node string, pause bool) error
	// How says what Pause stops, for the timeline.
	How string

	node string
}

// PauseWhole is NodeLoss.How for a kind node container frozen whole.
const PauseWhole = "docker pause of its node container: kubelet, kube-proxy and the pods at once"

// NewNodeLoss returns the node-loss fault.
func NewNodeLoss(rec Recorder, choice NodeChoice, pause func(ctx context.Context, node string, pause bool) error) *NodeLoss {
	rec.Type = TypeNodeLoss
	return &NodeLoss{Recorder: rec, Choice: choice, Pause: pause, How: PauseWhole}
}

// Type implements Fault.
func (f *NodeLoss) Type() string { return TypeNodeLoss }

// Inject freezes the chosen node, then proves that its Lease stopped.
func (f *NodeLoss) Inject(ctx context.Context) error {
	if !f.begin(true) {
		f.end(true)
		return nil
	}
	t, err := f.Choice.Choose(ctx)
	var none *NoNodeError
	if errors.As(err, &none) {
		// Not the harness's failure: this placement leaves no node to lose alone. Said, not hidden.
		f.record(timeline.FaultSkip, "", "", "no node can be lost without taking more than the target: "+err.Error(), nil)
		f.end(false)
		return nil
	}
	if err != nil {
		f.end(false)
		return fmt.Errorf("node-loss: %w", err)
	}
	health, err := ReadNodeHealth(ctx, f.Choice.Client, t.Node)
	if err != nil {
		f.end(false)
		return fmt.Errorf("node-loss: %w", err)
	}
	// The freeze gets its own bounded context: an interrupt must not cut it between the pause and
	// its record, or the revert would not know there is a node to resume.
	pauseCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
	err = f.Pause(pauseCtx, t.Node, true)
	cancel()
	if err != nil {
		resumeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
		f.Pause(resumeCtx, t.Node, false) // the pause may have landed all the same
		cancel()
		f.end(false)
		return fmt.Errorf("node-loss: %w", err)
	}
	stopped := time.Now()
	f.node = t.Node
	params := health.Params()
	params["node"], params["pods"], params["chosen"] = t.Node, strings.Join(t.Pods, ","), t.How
	f.record(timeline.FaultInject, "node/"+t.Node, "", fmt.Sprintf("stopped node %s (%s), running the target's pods %s; "+
		"node-monitor-grace-period %s (%s)", t.Node, f.How, strings.Join(t.Pods, ", "), health.GracePeriod, health.Source), params)
	f.end(true)
	f.proveLeaseStopped(ctx, stopped, health)
	return nil
}

// proveLeaseStopped waits one renew interval (and a margin) and checks that the node's Lease was
// not renewed after the freeze.
func (f *NodeLoss) proveLeaseStopped(ctx context.Context, stopped time.Time, h oracle.NodeHealth) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(h.RenewInterval() + 2*time.Second):
	}
	l, err := f.Choice.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, f.node, metav1.GetOptions{})
	if err != nil {
		f.proof("node/"+f.node, "", timeline.PhaseDuring, false, "read the node's Lease: "+err.Error(), nil)
		return
	}
	if l.Spec.RenewTime == nil {
		f.proof("node/"+f.node, "", timeline.PhaseDuring, false, "the node's Lease has no renew time", nil)
		return
	}
	renewed := l.Spec.RenewTime.Time
	// RenewTime has microsecond precision and comes from the node's clock (the same machine here).
	ok := renewed.Before(stopped.Add(500 * time.Millisecond))
	detail := fmt.Sprintf("node %s's Lease last renewed %s before the freeze and not since (checked %s after it)",
		f.node, stopped.Sub(renewed).Round(time.Millisecond), time.Since(stopped).Round(time.Millisecond))
	if !ok {
		detail = fmt.Sprintf("node %s's Lease was renewed %s after the freeze: the node is not stopped", f.node, renewed.Sub(stopped).Round(time.Millisecond))
	}
	f.proof("node/"+f.node, "", timeline.PhaseDuring, ok, detail, map[string]string{"renewed": renewed.UTC().Format(time.RFC3339Nano)})
}

// Revert resumes the node.
func (f *NodeLoss) Revert(ctx context.Context) error {
	if !f.begin(false) {
		f.end(false)
		return nil
	}
	if err := f.Pause(ctx, f.node, false); err != nil {
		f.end(true)
		return fmt.Errorf("node-loss: resume node %s: %w", f.node, err)
	}
	f.record(timeline.FaultRevert, "node/"+f.node, "", "resumed node "+f.node, map[string]string{"node": f.node})
	f.end(false)
	return nil
}

// ReadNodeHealth reads the node lifecycle timing the cluster runs with: kube-controller-manager's
// --node-monitor-grace-period and --node-monitor-period from its static pod (kubeadm, kind), and
// node's Lease duration. What the cluster does not show is the default of its version, and Source
// says so.
func ReadNodeHealth(ctx context.Context, client kubernetes.Interface, node string) (oracle.NodeHealth, error) {
	h := oracle.NodeHealth{MonitorPeriod: oracle.DefaultNodeMonitorPeriod, LeaseDuration: oracle.DefaultNodeLeaseDuration}
	var src []string
	pods, err := client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "component=kube-controller-manager"})
	if err != nil && !apierrors.IsForbidden(err) {
		return h, fmt.Errorf("list kube-controller-manager pods: %w", err)
	}
	flags := map[string]string{}
	if err == nil && len(pods.Items) > 0 && len(pods.Items[0].Spec.Containers) > 0 {
		c := pods.Items[0].Spec.Containers[0]
		for _, a := range append(append([]string{}, c.Command...), c.Args...) {
			if k, v, ok := strings.Cut(strings.TrimLeft(a, "-"), "="); ok {
				flags[k] = v
			}
		}
		src = append(src, "kube-controller-manager flags")
	}
	if v, ok := flags["node-monitor-grace-period"]; ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			return h, fmt.Errorf("kube-controller-manager --node-monitor-grace-period=%s: %w", v, err)
		}
		h.GracePeriod = d
	} else {
		d, why, err := defaultGracePeriod(client)
		if err != nil {
			return h, err
		}
		h.GracePeriod = d
		src = append(src, "grace period: "+why)
	}
	if v, ok := flags["node-monitor-period"]; ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			return h, fmt.Errorf("kube-controller-manager --node-monitor-period=%s: %w", v, err)
		}
		h.MonitorPeriod = d
	}
	l, err := client.CoordinationV1().Leases("kube-node-lease").Get(ctx, node, metav1.GetOptions{})
	switch {
	case err == nil && l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds > 0:
		h.LeaseDuration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
		src = append(src, "node Lease")
	case err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err):
		return h, fmt.Errorf("get the Lease of node %s: %w", node, err)
	default:
		src = append(src, "lease duration: default")
	}
	h.Source = strings.Join(src, "; ")
	return h, nil
}

// defaultGracePeriod is --node-monitor-grace-period's default for the server's version.
func defaultGracePeriod(client kubernetes.Interface) (time.Duration, string, error) {
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return 0, "", fmt.Errorf("server version: %w", err)
	}
	minor, _ := strconv.Atoi(strings.TrimRight(v.Minor, "+"))
	if v.Major == "1" && minor > 0 && minor < 32 {
		return oracle.LegacyNodeMonitorGracePeriod, fmt.Sprintf("default of v%s.%s (not set on kube-controller-manager)", v.Major, v.Minor), nil
	}
	return oracle.DefaultNodeMonitorGracePeriod, fmt.Sprintf("default of v%s.%s (not set on kube-controller-manager)", v.Major, v.Minor), nil
}
