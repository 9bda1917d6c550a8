package lint

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// LoadNamespace reads the workloads and Services of a live namespace: Deployments, StatefulSets,
// DaemonSets, CronJobs, and ReplicaSets, Jobs and Pods that no controller owns (owned ones are
// linted through their owner).
func LoadNamespace(ctx context.Context, client kubernetes.Interface, namespace string) (*Inventory, error) {
	inv := &Inventory{}
	pos := Position{File: "namespace/" + namespace}
	opts := metav1.ListOptions{}
	add := func(kind string, meta metav1.ObjectMeta, template corev1.PodTemplateSpec) {
		w := newWorkload(kind, meta, template)
		w.Pos = pos
		inv.Workloads = append(inv.Workloads, w)
	}

	deps, err := client.AppsV1().Deployments(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list deployments in namespace %q: %w", namespace, err)
	}
	for _, o := range deps.Items {
		add("Deployment", o.ObjectMeta, o.Spec.Template)
	}
	sts, err := client.AppsV1().StatefulSets(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list statefulsets in namespace %q: %w", namespace, err)
	}
	for _, o := range sts.Items {
		add("StatefulSet", o.ObjectMeta, o.Spec.Template)
	}
	dss, err := client.AppsV1().DaemonSets(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list daemonsets in namespace %q: %w", namespace, err)
	}
	for _, o := range dss.Items {
		add("DaemonSet", o.ObjectMeta, o.Spec.Template)
	}
	rss, err := client.AppsV1().ReplicaSets(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list replicasets in namespace %q: %w", namespace, err)
	}
	for _, o := range rss.Items {
		if len(o.OwnerReferences) == 0 {
			add("ReplicaSet", o.ObjectMeta, o.Spec.Template)
		}
	}
	cjs, err := client.BatchV1().CronJobs(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list cronjobs in namespace %q: %w", namespace, err)
	}
	for _, o := range cjs.Items {
		add("CronJob", o.ObjectMeta, o.Spec.JobTemplate.Spec.Template)
	}
	jobs, err := client.BatchV1().Jobs(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list jobs in namespace %q: %w", namespace, err)
	}
	for _, o := range jobs.Items {
		if len(o.OwnerReferences) == 0 {
			add("Job", o.ObjectMeta, o.Spec.Template)
		}
	}
	pods, err := client.CoreV1().Pods(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list pods in namespace %q: %w", namespace, err)
	}
	for _, o := range pods.Items {
		if len(o.OwnerReferences) == 0 {
			add("Pod", o.ObjectMeta, corev1.PodTemplateSpec{ObjectMeta: o.ObjectMeta, Spec: o.Spec})
		}
	}
	svcs, err := client.CoreV1().Services(namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list services in namespace %q: %w", namespace, err)
	}
	for _, o := range svcs.Items {
		inv.Services = append(inv.Services, &Service{Name: o.Name, Namespace: o.Namespace, Spec: o.Spec, Pos: pos})
	}
	inv.AllServicesInView = true
	return inv, nil
}
