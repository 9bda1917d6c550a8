package deploy

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// ensureNamespace creates ns unless it exists.
func ensureNamespace(ctx context.Context, client kubernetes.Interface, ns string) error {
	_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: ns, Labels: map[string]string{"app.kubernetes.io/part-of": "probegate"},
	}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	return nil
}

// apply creates obj, or replaces the existing object of the same name (keeping what the server owns).
func apply(ctx context.Context, client kubernetes.Interface, obj runtime.Object) error {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		api := client.CoreV1().ConfigMaps(o.Namespace)
		return upsert(ctx, "ConfigMap", o.Name,
			func() error { _, err := api.Create(ctx, o, metav1.CreateOptions{}); return err },
			func() error {
				cur, err := api.Get(ctx, o.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				o.ResourceVersion = cur.ResourceVersion
				_, err = api.Update(ctx, o, metav1.UpdateOptions{})
				return err
			})
	case *corev1.Service:
		api := client.CoreV1().Services(o.Namespace)
		return upsert(ctx, "Service", o.Name,
			func() error { _, err := api.Create(ctx, o, metav1.CreateOptions{}); return err },
			func() error {
				cur, err := api.Get(ctx, o.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				o.ResourceVersion = cur.ResourceVersion
				o.Spec.ClusterIP, o.Spec.ClusterIPs = cur.Spec.ClusterIP, cur.Spec.ClusterIPs
				_, err = api.Update(ctx, o, metav1.UpdateOptions{})
				return err
			})
	case *appsv1.Deployment:
		api := client.AppsV1().Deployments(o.Namespace)
		return upsert(ctx, "Deployment", o.Name,
			func() error { _, err := api.Create(ctx, o, metav1.CreateOptions{}); return err },
			func() error {
				cur, err := api.Get(ctx, o.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				o.ResourceVersion = cur.ResourceVersion
				_, err = api.Update(ctx, o, metav1.UpdateOptions{})
				return err
			})
	}
	return fmt.Errorf("apply: unsupported object %T", obj)
}

func upsert(_ context.Context, kind, name string, create, update func() error) error {
	err := create()
	if apierrors.IsAlreadyExists(err) {
		err = update()
	}
	if err != nil {
		return fmt.Errorf("apply %s %s: %w", kind, name, err)
	}
	return nil
}
