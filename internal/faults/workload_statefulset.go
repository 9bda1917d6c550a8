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
		Kind: "StatefulSet",
		Doc: "a template change (RollingUpdate) replaces the pods one at a time from the highest ordinal down, each under its old name, " +
			"down to the partition; with OnDelete nothing rolls by itself",
		Open: func(client kubernetes.Interface, namespace, name string) Workload {
			return statefulSetWorkload{client: client, ns: namespace, name: name}
		},
	})
}

type statefulSetWorkload struct {
	client   kubernetes.Interface
	ns, name string
}

func (w statefulSetWorkload) Kind() string { return "StatefulSet" }
func (w statefulSetWorkload) Name() string { return w.name }

func (w statefulSetWorkload) UpdateTemplate(ctx context.Context, change func(*corev1.PodTemplateSpec) error) (int64, error) {
	var gen int64
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := w.client.AppsV1().StatefulSets(w.ns).Get(ctx, w.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := change(&s.Spec.Template); err != nil {
			return err
		}
		s, err = w.client.AppsV1().StatefulSets(w.ns).Update(ctx, s, metav1.UpdateOptions{})
		if err == nil {
			gen = s.Generation
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("update statefulset %s/%s: %w", w.ns, w.name, err)
	}
	return gen, nil
}

func (w statefulSetWorkload) Selector(ctx context.Context) (string, error) {
	s, err := w.client.AppsV1().StatefulSets(w.ns).Get(ctx, w.name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get statefulset %s/%s: %w", w.ns, w.name, err)
	}
	return selectorString("StatefulSet", w.name, s.Spec.Selector)
}

func (w statefulSetWorkload) Progress(ctx context.Context) (Progress, error) {
	s, err := w.client.AppsV1().StatefulSets(w.ns).Get(ctx, w.name, metav1.GetOptions{})
	if err != nil {
		return Progress{}, fmt.Errorf("get statefulset %s/%s: %w", w.ns, w.name, err)
	}
	p := Progress{ObservedGeneration: s.Status.ObservedGeneration, Updated: s.Status.UpdatedReplicas,
		Ready: s.Status.ReadyReplicas, Replicas: s.Status.Replicas}
	if s.Spec.Replicas != nil {
		p.Replicas = *s.Spec.Replicas
	}
	p.Rolls = statefulSetRolls(s)
	// One pod at a time unless maxUnavailable (behind the MaxUnavailableStatefulSet gate) says more.
	p.MaxUnavailable = 1
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		n, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, int(p.Replicas), false)
		if err != nil {
			return p, fmt.Errorf("statefulset %s/%s maxUnavailable: %w", w.ns, w.name, err)
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
