package faults

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/pause"
)

// rolloutObserveTimeout bounds how long a rollout fault waits to see its rollout start.
var rolloutObserveTimeout = 10 * time.Second

// observeRollout waits (up to rolloutObserveTimeout) until the Deployment's controller has seen
// generation and records what it reports: the proof that a rollout started. phase is the proof's
// ParamPhase ("" for a one-shot fault).
func observeRollout(ctx context.Context, rec Recorder, client kubernetes.Interface, ns, name string, generation int64, phase string) {
	d, err := waitObserved(ctx, client, ns, name, generation)
	params := map[string]string{"generation": fmt.Sprint(generation)}
	if err != nil {
		params["error"] = err.Error()
		rec.proof(name, "", phase, false, fmt.Sprintf("deployment %s: %v", name, err), params)
		return
	}
	if d.Status.ObservedGeneration < generation {
		rec.proof(name, "", phase, false, fmt.Sprintf("deployment %s: generation %d not observed by the controller within %s (observed %d)",
			name, generation, rolloutObserveTimeout, d.Status.ObservedGeneration), params)
		return
	}
	params["updated"] = fmt.Sprint(d.Status.UpdatedReplicas)
	params["ready"] = fmt.Sprint(d.Status.ReadyReplicas)
	rec.proof(name, "", phase, true, fmt.Sprintf("rollout of generation %d under way: %d updated, %d ready of %d",
		generation, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.Replicas), params)
}

// waitObserved polls the Deployment (up to rolloutObserveTimeout) until its controller has observed
// generation, and returns the last Deployment read; the error is the last read's.
func waitObserved(ctx context.Context, client kubernetes.Interface, ns, name string, generation int64) (*appsv1.Deployment, error) {
	ctx, cancel := context.WithTimeout(ctx, rolloutObserveTimeout)
	defer cancel()
	for {
		d, err := client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil && d.Status.ObservedGeneration >= generation {
			return d, nil
		}
		if pause.For(ctx, 200*time.Millisecond) != nil {
			return d, err
		}
	}
}
