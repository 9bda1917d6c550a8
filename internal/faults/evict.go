package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TypeEvict evicts one pod through the Eviction API.
const TypeEvict = "evict"

func init() {
	Register(Definition{
		Type:     TypeEvict,
		Doc:      "evicts one pod through the Eviction API, which honours PodDisruptionBudgets (a refusal is recorded as a skip)",
		Params:   []Param{podParam, graceParam},
		Proof:    "the pod's deletion timestamp and grace period as the API reports them right after",
		Explains: []timeline.RestartCause{timeline.CauseEviction},
		Build: func(a Args) (Fault, error) {
			return NewEvict(a.Rec, a.Pods, a.OptDuration("grace")), nil
		},
	})
}

// Evict evicts one pod through the Eviction API (policy/v1), which honours PodDisruptionBudgets. A
// refusal (HTTP 429: the budget allows no disruption now) is not an error of the harness: it is
// recorded as a skip saying so, and Refused reports it. One-shot: Revert has nothing to undo.
type Evict struct {
	Recorder
	state
	Choice PodChoice
	Grace  *time.Duration

	pod     string
	refused string
}

// NewEvict returns the evict fault.
func NewEvict(rec Recorder, choice PodChoice, grace *time.Duration) *Evict {
	rec.Type = TypeEvict
	return &Evict{Recorder: rec, Choice: choice, Grace: grace}
}

// Type implements Fault.
func (f *Evict) Type() string { return TypeEvict }

// SetLoad gives the pod choice the running load (for "busiest").
func (f *Evict) SetLoad(l RateSetter) { f.Choice.SetLoad(l) }

// Refused returns the API's refusal message when a PodDisruptionBudget blocked the eviction.
func (f *Evict) Refused() string { return f.refused }

// Inject evicts the chosen pod.
func (f *Evict) Inject(ctx context.Context) error {
	if !f.begin(true) {
		f.end(true)
		return nil
	}
	pod, how, err := f.Choice.choose(ctx)
	if err != nil {
		f.end(false)
		return fmt.Errorf("evict: %w", err)
	}
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: f.Choice.Namespace}}
	params := chosenParams(how)
	if secs := graceSeconds(f.Grace, params); secs != nil {
		ev.DeleteOptions = &metav1.DeleteOptions{GracePeriodSeconds: secs}
	}
	err = f.Choice.Client.PolicyV1().Evictions(f.Choice.Namespace).Evict(ctx, ev)
	if apierrors.IsTooManyRequests(err) {
		f.refused = err.Error()
		params["refused"] = "429"
		f.record(timeline.FaultSkip, pod.Name, pod.Name, "eviction refused by a PodDisruptionBudget (HTTP 429): "+err.Error(), params)
		f.end(false)
		return nil
	}
	if err != nil {
		f.end(false)
		return fmt.Errorf("evict %s/%s: %w", f.Choice.Namespace, pod.Name, err)
	}
	f.pod = pod.Name
	f.record(timeline.FaultInject, pod.Name, pod.Name, "evicted through the Eviction API (policy/v1)", params)
	f.end(true)
	observeTermination(ctx, f.Recorder, f.Choice, pod)
	return nil
}

// Revert does nothing: an evicted pod is replaced by its controller.
func (f *Evict) Revert(context.Context) error {
	f.begin(false)
	f.end(false)
	return nil
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
