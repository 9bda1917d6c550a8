package faults

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/probegate/probegate/internal/timeline"
)

// TypeNodeDrain cordons a node and evicts the target's pods from it.
const TypeNodeDrain = "node-drain"

// Drain defaults: how long the evictions may wait for PodDisruptionBudgets, and how often a refused
// eviction is retried (kubectl drain retries every 5 s; a shorter retry shows the budget's effect
// sooner without changing what it allows).
const (
	DefaultDrainTimeout = 2 * time.Minute
	drainRetry          = time.Second
)

func init() {
	Register(Definition{
		Type: TypeNodeDrain,
		Doc: "cordons a node and evicts the target's pods on it through the Eviction API, retrying refusals as " +
			"kubectl drain --pod-selector does, so PodDisruptionBudgets pace it; uncordons on revert",
		Params: []Param{
			nodeParam,
			{Name: "timeout", Kind: KindDuration, Doc: "how long the evictions may wait for disruption budgets (default 2m)"},
		},
		Needs:    []Capability{NeedsNodes},
		Proof:    "every evicted pod's deletion timestamp, and how long each waited for its disruption budget",
		Explains: []timeline.RestartCause{timeline.CauseEviction},
		Build: func(a Args) (Fault, error) {
			env := a.Env
			choice := NodeChoice{Client: env.Client, Namespace: env.Namespace, Selector: env.Selector, Rand: a.Pods.Rand}
			choice.Node, _ = a.Param("node")
			return NewNodeDrain(a.Rec, choice, a.Duration("timeout", DefaultDrainTimeout)), nil
		},
	})
}

// NodeDrain cordons a node (spec.unschedulable) and evicts the target's pods on it, all at once and
// each retried while a PodDisruptionBudget refuses it (HTTP 429), until Timeout: what `kubectl drain
// --pod-selector` does. Other pods on the node are left alone (the target is what is tested).
// Revert uncordons the node unless it was cordoned before. Proof of effect: every pod evicted and
// terminating; a pod its budget kept past Timeout leaves the effect unproven.
type NodeDrain struct {
	Recorder
	state
	Choice  NodeChoice
	Timeout time.Duration

	node        string
	wasCordoned bool
}

// NewNodeDrain returns the node-drain fault.
func NewNodeDrain(rec Recorder, choice NodeChoice, timeout time.Duration) *NodeDrain {
	rec.Type = TypeNodeDrain
	return &NodeDrain{Recorder: rec, Choice: choice, Timeout: timeout}
}

// Type implements Fault.
func (f *NodeDrain) Type() string { return TypeNodeDrain }

// Inject cordons the chosen node and evicts the target's pods from it; it returns once every
// eviction went through or the timeout passed.
func (f *NodeDrain) Inject(ctx context.Context) error {
	if !f.begin(true) {
		f.end(true)
		return nil
	}
	t, err := f.Choice.Choose(ctx)
	if err != nil {
		f.end(false)
		return fmt.Errorf("node-drain: %w", err)
	}
	was, err := setUnschedulable(ctx, f.Choice, t.Node, true)
	if err != nil {
		f.end(false)
		return fmt.Errorf("node-drain: %w", err)
	}
	f.node, f.wasCordoned = t.Node, was
	params := map[string]string{"node": t.Node, "pods": strings.Join(t.Pods, ","), "chosen": t.How}
	f.record(timeline.FaultInject, "node/"+t.Node, "", fmt.Sprintf("cordoned node %s; evicting the target's %d pods on it (%s)",
		t.Node, len(t.Pods), strings.Join(t.Pods, ", ")), params)
	f.end(true)

	results := make([]evictResult, len(t.Pods))
	var wg sync.WaitGroup
	for i, pod := range t.Pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = f.evict(ctx, pod)
		}()
	}
	wg.Wait()
	var failed []string
	for _, r := range results {
		if r.err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", r.pod, r.err))
		}
	}
	if len(failed) > 0 {
		f.proof("node/"+t.Node, "", "", false, "not every pod was evicted: "+strings.Join(failed, "; "), nil)
		return nil
	}
	var words []string
	for _, r := range results {
		words = append(words, fmt.Sprintf("%s after %s", r.pod, r.waited.Round(time.Millisecond)))
	}
	f.proof("node/"+t.Node, "", "", true, fmt.Sprintf("drained node %s: evicted %s", t.Node, strings.Join(words, ", ")), nil)
	return nil
}

// evictResult is how one pod's eviction went: how long it waited for its budget and how often it
// was refused, or why it failed.
type evictResult struct {
	pod     string
	waited  time.Duration
	refused int
	err     error
}

// evict evicts pod, retrying while a disruption budget refuses, and records the eviction on the
// pod's timeline.
func (f *NodeDrain) evict(ctx context.Context, pod string) evictResult {
	res := evictResult{pod: pod}
	start := time.Now()
	deadline := start.Add(f.Timeout)
	api := f.Choice.Client.PolicyV1().Evictions(f.Choice.Namespace)
	for {
		err := api.Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: f.Choice.Namespace}})
		switch {
		case err == nil:
			res.waited = time.Since(start)
			f.record(timeline.FaultObserve, "pod/"+pod, pod, fmt.Sprintf("evicted from node %s after %s (%d refusals by a disruption budget)",
				f.node, res.waited.Round(time.Millisecond), res.refused), map[string]string{"node": f.node, "refused": fmt.Sprint(res.refused)})
			return res
		case apierrors.IsNotFound(err):
			res.waited = time.Since(start)
			return res // gone already: nothing left to drain
		case !apierrors.IsTooManyRequests(err):
			res.err = fmt.Errorf("evict: %w", err)
			return res
		}
		res.refused++
		if time.Now().Add(drainRetry).After(deadline) {
			res.err = fmt.Errorf("a disruption budget refused the eviction %d times in %s: %w", res.refused, f.Timeout, err)
			return res
		}
		select {
		case <-ctx.Done():
			res.err = ctx.Err()
			return res
		case <-time.After(drainRetry):
		}
	}
}

// Revert uncordons the node, unless it was cordoned before the drain.
func (f *NodeDrain) Revert(ctx context.Context) error {
	if !f.begin(false) {
		f.end(false)
		return nil
	}
	if f.wasCordoned {
		f.record(timeline.FaultRevert, "node/"+f.node, "", "node "+f.node+" was cordoned before the drain: left cordoned", map[string]string{"node": f.node})
		f.end(false)
		return nil
	}
	if _, err := setUnschedulable(ctx, f.Choice, f.node, false); err != nil {
		f.end(true)
		return fmt.Errorf("node-drain: %w", err)
	}
	f.record(timeline.FaultRevert, "node/"+f.node, "", "uncordoned node "+f.node, map[string]string{"node": f.node})
	f.end(false)
	return nil
}

// setUnschedulable cordons (true) or uncordons node and returns whether it was cordoned before.
func setUnschedulable(ctx context.Context, c NodeChoice, node string, on bool) (bool, error) {
	n, err := c.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("get node %s: %w", node, err)
	}
	was := n.Spec.Unschedulable
	if was == on {
		return was, nil
	}
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on)
	if _, err := c.Client.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		verb := "uncordon"
		if on {
			verb = "cordon"
		}
		return was, fmt.Errorf("%s node %s: %w", verb, node, err)
	}
	return was, nil
}
