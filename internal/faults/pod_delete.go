package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TypePodDelete deletes one pod.
const TypePodDelete = "pod-delete"

// graceParam overrides the grace period of a pod deletion or eviction.
var graceParam = Param{Name: "grace", Kind: KindDuration, Doc: "grace period (default the pod's)"}

func init() {
	Register(Definition{
		Type:     TypePodDelete,
		Doc:      "deletes one pod, with a chosen grace period or the pod's own",
		Params:   []Param{podParam, graceParam},
		Proof:    "the pod's deletion timestamp and grace period as the API reports them right after",
		Explains: []timeline.RestartCause{timeline.CauseDeletion},
		Build: func(a Args) (Fault, error) {
			return NewPodDelete(a.Rec, a.Pods, a.OptDuration("grace")), nil
		},
	})
}

// PodDelete deletes one pod, with a chosen grace period or the pod's own. It is one-shot: the
// Deployment replaces the pod, and Revert has nothing to undo. Proof of effect: the pod's deletion
// timestamp and grace period as the API reports them right after.
type PodDelete struct {
	Recorder
	state
	Choice PodChoice
	Grace  *time.Duration // nil: the pod's terminationGracePeriodSeconds

	pod string
}

// NewPodDelete returns the pod-delete fault.
func NewPodDelete(rec Recorder, choice PodChoice, grace *time.Duration) *PodDelete {
	rec.Type = TypePodDelete
	return &PodDelete{Recorder: rec, Choice: choice, Grace: grace}
}

// Type implements Fault.
func (f *PodDelete) Type() string { return TypePodDelete }

// Pod is the deleted pod ("" before Inject).
func (f *PodDelete) Pod() string { return f.pod }

// SetLoad gives the pod choice the running load (for "busiest").
func (f *PodDelete) SetLoad(l RateSetter) { f.Choice.SetLoad(l) }

// Inject deletes the chosen pod.
func (f *PodDelete) Inject(ctx context.Context) error {
	if !f.begin(true) {
		f.end(true)
		return nil
	}
	pod, how, err := f.Choice.choose(ctx)
	if err != nil {
		f.end(false)
		return fmt.Errorf("pod-delete: %w", err)
	}
	opts := metav1.DeleteOptions{}
	params := chosenParams(how)
	detail := "delete with the pod's own grace period"
	if secs := graceSeconds(f.Grace, params); secs != nil {
		opts.GracePeriodSeconds = secs
		detail = fmt.Sprintf("delete with grace period %ds", *secs)
	} else if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		params["grace_s"] = fmt.Sprint(*g)
	}
	if err := f.Choice.Client.CoreV1().Pods(f.Choice.Namespace).Delete(ctx, pod.Name, opts); err != nil {
		f.end(false)
		return fmt.Errorf("pod-delete %s/%s: %w", f.Choice.Namespace, pod.Name, err)
	}
	f.pod = pod.Name
	f.record(timeline.FaultInject, pod.Name, pod.Name, detail, params)
	f.end(true)
	observeTermination(ctx, f.Recorder, f.Choice, pod)
	return nil
}

// Revert does nothing: a deleted pod is replaced by its controller.
func (f *PodDelete) Revert(context.Context) error {
	f.begin(false)
	f.end(false)
	return nil
}

// graceSeconds converts a chosen grace period for the API and records it in params as grace_s;
// nil when none was chosen (the pod's own applies).
func graceSeconds(grace *time.Duration, params map[string]string) *int64 {
	if grace == nil {
		return nil
	}
	secs := int64(grace.Seconds())
	params["grace_s"] = fmt.Sprint(secs)
	return &secs
}

// observeTermination records the proof of a pod deletion or eviction as the API shows it right
// after: the pod (the same UID) terminating with its deletion timestamp and grace period, or already
// gone. A pod without a deletion timestamp is recorded as not observed.
func observeTermination(ctx context.Context, rec Recorder, choice PodChoice, pod *corev1.Pod) {
	name := pod.Name
	p, err := choice.Client.CoreV1().Pods(choice.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err != nil && isNotFound(err):
		rec.proof(name, name, "", true, "pod already gone (not found right after)", nil)
	case err != nil:
		rec.proof(name, name, "", false, "get pod: "+err.Error(), map[string]string{"error": err.Error()})
	case pod.UID != "" && p.UID != pod.UID:
		rec.proof(name, name, "", true, fmt.Sprintf("pod already gone (the name now belongs to UID %s)", p.UID), nil)
	case p.DeletionTimestamp == nil:
		rec.proof(name, name, "", false, fmt.Sprintf("pod has no deletion timestamp right after (phase %s): not being deleted", p.Status.Phase), nil)
	default:
		g := int64(0)
		if p.DeletionGracePeriodSeconds != nil {
			g = *p.DeletionGracePeriodSeconds
		}
		rec.proof(name, name, "", true, fmt.Sprintf("pod terminating: deletion timestamp %s, grace period %ds",
			p.DeletionTimestamp.UTC().Format(time.RFC3339), g),
			map[string]string{"grace_s": fmt.Sprint(g), "deletion_timestamp": p.DeletionTimestamp.UTC().Format(time.RFC3339)})
	}
}
