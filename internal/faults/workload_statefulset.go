package faults

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

func init() {
	RegisterWorkload(WorkloadKind{
		Kind: "StatefulSet",
		Doc: "a template change (RollingUpdate) replaces the pods one at a time from the highest ordinal down, each under its old name, " +
			"down to the partition; with OnDelete nothing rolls by itself",
		Open: func(client kubernetes.Interface, namespace, name string) Workload {
			return typedWorkload[*appsv1.StatefulSet]{ns: namespace, name: name, api: kindAPI[*appsv1.StatefulSet]{
				kind: "StatefulSet",
				get: func(ctx context.Context, ns, name string) (*appsv1.StatefulSet, error) {
					return client.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
				},
				update: func(ctx context.Context, s *appsv1.StatefulSet) (*appsv1.StatefulSet, error) {
					return client.AppsV1().StatefulSets(s.Namespace).Update(ctx, s, metav1.UpdateOptions{})
				},
				template:   func(s *appsv1.StatefulSet) *corev1.PodTemplateSpec { return &s.Spec.Template },
				selector:   func(s *appsv1.StatefulSet) *metav1.LabelSelector { return s.Spec.Selector },
				generation: func(s *appsv1.StatefulSet) int64 { return s.Generation },
				progress:   statefulSetProgress,
			}}
		},
	})
}

// statefulSetProgress reads a StatefulSet's rollout status: it has no surge, and takes one pod out at
// a time unless maxUnavailable (behind the MaxUnavailableStatefulSet gate) says more.
func statefulSetProgress(s *appsv1.StatefulSet) (Progress, error) {
	p := Progress{ObservedGeneration: s.Status.ObservedGeneration, Updated: s.Status.UpdatedReplicas,
		Ready: s.Status.ReadyReplicas, Replicas: s.Status.Replicas, Rolls: statefulSetRolls(s), MaxUnavailable: 1}
	if s.Spec.Replicas != nil {
		p.Replicas = *s.Spec.Replicas
	}
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		n, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, int(p.Replicas), false)
		if err != nil {
			return p, err
		}
		p.MaxUnavailable = int32(max(n, 1))
	}
	return p, nil
}

// statefulSetRolls says why a template change replaces no pod by itself ("" when it rolls them all).
func statefulSetRolls(s *appsv1.StatefulSet) string {
	u := s.Spec.UpdateStrategy
	if u.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return "its updateStrategy is OnDelete: a template change replaces no pod until someone deletes it"
	}
	if u.RollingUpdate != nil && u.RollingUpdate.Partition != nil && *u.RollingUpdate.Partition > 0 {
		return fmt.Sprintf("its rolling update has partition %d: only pods with an ordinal of %d or more are replaced",
			*u.RollingUpdate.Partition, *u.RollingUpdate.Partition)
	}
	return ""
}
