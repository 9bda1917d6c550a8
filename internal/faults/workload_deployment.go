package faults

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

func init() {
	RegisterWorkload(WorkloadKind{
		Kind: "Deployment",
		Doc:  "a template change starts a rollout: new pods surge in, old ones are removed (maxSurge, maxUnavailable)",
		Open: func(client kubernetes.Interface, namespace, name string) Workload {
			return deploymentWorkload{client: client, ns: namespace, name: name}
		},
	})
}

type deploymentWorkload struct {
	client   kubernetes.Interface
	ns, name string
}

func (w deploymentWorkload) Kind() string { return "Deployment" }
func (w deploymentWorkload) Name() string { return w.name }

func (w deploymentWorkload) UpdateTemplate(ctx context.Context, change func(*corev1.PodTemplateSpec) error) (int64, error) {
	var gen int64
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := w.client.AppsV1().Deployments(w.ns).Get(ctx, w.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := change(&d.Spec.Template); err != nil {
			return err
		}
		d, err = w.client.AppsV1().Deployments(w.ns).Update(ctx, d, metav1.UpdateOptions{})
		if err == nil {
			gen = d.Generation
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("update deployment %s/%s: %w", w.ns, w.name, err)
	}
	return gen, nil
}

func (w deploymentWorkload) Selector(ctx context.Context) (string, error) {
	d, err := w.client.AppsV1().Deployments(w.ns).Get(ctx, w.name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get deployment %s/%s: %w", w.ns, w.name, err)
	}
	return selectorString("Deployment", w.name, d.Spec.Selector)
}

func (w deploymentWorkload) Progress(ctx context.Context) (Progress, error) {
	d, err := w.client.AppsV1().Deployments(w.ns).Get(ctx, w.name, metav1.GetOptions{})
	if err != nil {
		return Progress{}, fmt.Errorf("get deployment %s/%s: %w", w.ns, w.name, err)
	}
	p := Progress{ObservedGeneration: d.Status.ObservedGeneration, Updated: d.Status.UpdatedReplicas,
		Ready: d.Status.ReadyReplicas, Replicas: d.Status.Replicas}
	if d.Spec.Replicas != nil {
		p.Replicas = *d.Spec.Replicas
	}
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		p.MaxUnavailable = p.Replicas
		return p, nil
	}
	unavailable := intstr.FromString("25%") // the API's default
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		unavailable = *ru.MaxUnavailable
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&unavailable, int(p.Replicas), false)
	if err != nil {
		return p, fmt.Errorf("deployment %s/%s maxUnavailable: %w", w.ns, w.name, err)
	}
	p.MaxUnavailable = int32(n)
	return p, nil
}
