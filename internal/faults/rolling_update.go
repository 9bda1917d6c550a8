package faults

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/timeline"
)

// RestartedAtAnnotation is the pod-template annotation a rolling update changes (the same idea as
// `kubectl rollout restart`): a no-op change that replaces every pod.
const RestartedAtAnnotation = "probegate.dev/restartedAt"

// TypeRollingUpdate rolls the target's workload.
const TypeRollingUpdate = "rolling-update"

func init() {
	Register(Definition{
		Type:     TypeRollingUpdate,
		Doc:      "rolls the workload (Deployment or StatefulSet) with a no-op pod-template change, as kubectl rollout restart does",
		Needs:    []Capability{NeedsRollout},
		Proof:    "the controller observing the new generation, with the rollout under way",
		Explains: []timeline.RestartCause{timeline.CauseDeletion},
		Build: func(a Args) (Fault, error) {
			w, _ := a.Env.workload()
			return NewRollingUpdate(a.Rec, w), nil
		},
	})
}

// RollingUpdate rolls the workload with a no-op template change. One-shot: Revert has nothing to
// undo (rolling back would be a second rollout). Proof of effect: the controller observing the new
// generation with a rollout under way.
type RollingUpdate struct {
	Recorder
	state
	Workload Workload
}

// NewRollingUpdate returns the rolling-update fault.
func NewRollingUpdate(rec Recorder, w Workload) *RollingUpdate {
	rec.Type = TypeRollingUpdate
	return &RollingUpdate{Recorder: rec, Workload: w}
}

// Type implements Fault.
func (f *RollingUpdate) Type() string { return TypeRollingUpdate }

// Inject changes the template annotation.
func (f *RollingUpdate) Inject(ctx context.Context) error {
	if !f.begin(true) {
		f.end(true)
		return nil
	}
	stamp := time.Now().UTC().Format(time.RFC3339Nano)
	gen, err := f.Workload.UpdateTemplate(ctx, func(t *corev1.PodTemplateSpec) error {
		if t.Annotations == nil {
			t.Annotations = map[string]string{}
		}
		t.Annotations[RestartedAtAnnotation] = stamp
		return nil
	})
	if err != nil {
		f.end(false)
		return fmt.Errorf("rolling-update: %w", err)
	}
	what := strings.ToLower(f.Workload.Kind()) + " " + f.Workload.Name()
	f.record(timeline.FaultInject, f.Workload.Name(), "", fmt.Sprintf("pod template annotation %s=%s: rolling %s", RestartedAtAnnotation, stamp, what),
		map[string]string{"generation": fmt.Sprint(gen), "workload": f.Workload.Kind() + "/" + f.Workload.Name()})
	f.end(true)
	observeRollout(ctx, f.Recorder, f.Workload, gen, "")
	return nil
}

// Revert does nothing: the rollout is the fault, and it completes by itself.
func (f *RollingUpdate) Revert(context.Context) error {
	f.begin(false)
	f.end(false)
	return nil
}
