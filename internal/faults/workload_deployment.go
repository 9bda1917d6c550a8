package faults

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

func init() {
	RegisterWorkload(WorkloadKind{
		Kind: "Deployment",
		Doc:  "a template change starts a rollout: new pods surge in, old ones are removed (maxSurge, maxUnavailable)",
		Open: func(client kubernetes.Interface, namespace, name string) Workload {
			return deploymentWorkload(client, namespace, name)
		},
	})
}

func deploymentWorkload(client kubernetes.Interface, ns, name string) Workload {
	return typedWorkload[*appsv1.Deployment]{ns: ns, name: name, api: kindAPI[*appsv1.Deployment]{
		kind: "Deployment",
		get: func(ctx context.Context, ns, name string) (*appsv1.Deployment, error) {
			return client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, d *appsv1.Deployment) (*appsv1.Deployment, error) {
			return client.AppsV1().Deployments(d.Namespace).Update(ctx, d, metav1.UpdateOptions{})
		},
		template:   func(d *appsv1.Deployment) *corev1.PodTemplateSpec { return &d.Spec.Template },
		selector:   func(d *appsv1.Deployment) *metav1.LabelSelector { return d.Spec.Selector },
		generation: func(d *appsv1.Deployment) int64 { return d.Generation },
		progress:   deploymentProgress,
	}}
}

// deploymentProgress reads a Deployment's rollout status; a rolling update may take out maxUnavailable
// (25 % by default, rounded down), Recreate every pod.
func deploymentProgress(d *appsv1.Deployment) (Progress, error) {
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
		return p, err
	}
	p.MaxUnavailable = int32(n)
	return p, nil
}
