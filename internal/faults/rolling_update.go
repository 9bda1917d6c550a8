package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// RestartedAtAnnotation is the pod-template annotation a rolling update changes (the same idea as
// `kubectl rollout restart`): a no-op change that replaces every pod.
const RestartedAtAnnotation = "probegate.dev/restartedAt"

// TypeRollingUpdate rolls the Deployment.
const TypeRollingUpdate = "rolling-update"

func init() {
	Register(Definition{
		Type:     TypeRollingUpdate,
		Doc:      "rolls the Deployment with a no-op pod-template change, as kubectl rollout restart does",
		Needs:    []Capability{NeedsDeployment},
		Proof:    "the controller observing the new generation, with the rollout under way",
		Explains: []timeline.RestartCause{timeline.CauseDeletion},
		Build: func(a Args) (Fault, error) {
			return NewRollingUpdate(a.Rec, a.Env.Client, a.Env.Namespace, a.Env.Deployment), nil
		},
	})
}

// RollingUpdate rolls the Deployment with a no-op template change. One-shot: Revert has nothing to
// undo (rolling back would be a second rollout). Proof of effect: the controller observing the new
// generation.
type RollingUpdate struct {
	Recorder
	state
	Client     kubernetes.Interface
	Namespace  string
	Deployment string
}

// NewRollingUpdate returns the rolling-update fault.
func NewRollingUpdate(rec Recorder, client kubernetes.Interface, namespace, deployment string) *RollingUpdate {
	rec.Type = TypeRollingUpdate
	return &RollingUpdate{Recorder: rec, Client: client, Namespace: namespace, Deployment: deployment}
}

// Type implements Fault.
func (f *RollingUpdate) Type() string { return TypeRollingUpdate }

// Inject patches the template annotation.
func (f *RollingUpdate) Inject(ctx context.Context) error {
	if !f.begin(true) {
		f.end(true)
		return nil
	}
	stamp := time.Now().UTC().Format(time.RFC3339Nano)
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, RestartedAtAnnotation, stamp)
	d, err := f.Client.AppsV1().Deployments(f.Namespace).Patch(ctx, f.Deployment, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		f.end(false)
		return fmt.Errorf("rolling-update %s/%s: %w", f.Namespace, f.Deployment, err)
	}
	f.record(timeline.FaultInject, f.Deployment, "", fmt.Sprintf("pod template annotation %s=%s: rolling deployment %s", RestartedAtAnnotation, stamp, f.Deployment),
		map[string]string{"generation": fmt.Sprint(d.Generation)})
	f.end(true)
	observeRollout(ctx, f.Recorder, f.Client, f.Namespace, f.Deployment, d.Generation, "")
	return nil
}

// Revert does nothing: the rollout is the fault, and it completes by itself.
func (f *RollingUpdate) Revert(context.Context) error {
	f.begin(false)
	f.end(false)
	return nil
}
