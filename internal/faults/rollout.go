package faults

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// rolloutObserveTimeout bounds how long a rollout fault waits to see its rollout start.
var rolloutObserveTimeout = 10 * time.Second

// observeRollout waits (up to rolloutObserveTimeout) until the Deployment's controller has seen generation and
// records what it reports: the proof that a rollout started.
func observeRollout(ctx context.Context, rec Recorder, client kubernetes.Interface, ns, name string, generation int64) {
	ctx, cancel := context.WithTimeout(ctx, rolloutObserveTimeout)
	defer cancel()
	params := map[string]string{"generation": fmt.Sprint(generation)}
	var d *appsv1.Deployment
	var err error
	for {
		d, err = client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil && d.Status.ObservedGeneration >= generation {
			break
		}
		if sleepCtx(ctx, 200*time.Millisecond) != nil {
			break
		}
	}
	if err != nil || d.Status.ObservedGeneration < generation {
		params["effect"] = "not-observed"
		detail := fmt.Sprintf("deployment %s: generation %d not observed by the controller within %s", name, generation, rolloutObserveTimeout)
		if err != nil {
			params["error"] = err.Error()
			detail = fmt.Sprintf("deployment %s: %v", name, err)
		}
		rec.record("observe", name, "", detail, params)
		return
	}
	params["effect"] = "confirmed"
	params["updated"] = fmt.Sprint(d.Status.UpdatedReplicas)
	params["ready"] = fmt.Sprint(d.Status.ReadyReplicas)
	rec.record("observe", name, "", fmt.Sprintf("rollout of generation %d under way: %d updated, %d ready of %d",
		generation, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.Replicas), params)
}
