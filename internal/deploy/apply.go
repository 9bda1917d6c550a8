package deploy

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
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

// apply creates obj, or replaces the existing object of the same name (keeping what the server
// owns). It looks first: creating a NodePort Service that exists fails on the port allocation, not
// with AlreadyExists.
func apply(ctx context.Context, client kubernetes.Interface, obj runtime.Object) error {
	var kind, name string
	var err error
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		kind, name = "ConfigMap", o.Name
		err = upsert(ctx, client.CoreV1().ConfigMaps(o.Namespace), o, nil)
	case *corev1.Service:
		kind, name = "Service", o.Name
		err = upsert(ctx, client.CoreV1().Services(o.Namespace), o, func(cur *corev1.Service) {
			o.Spec.ClusterIP, o.Spec.ClusterIPs = cur.Spec.ClusterIP, cur.Spec.ClusterIPs
		})
	case *appsv1.Deployment:
		kind, name = "Deployment", o.Name
		err = upsert(ctx, client.AppsV1().Deployments(o.Namespace), o, nil)
	case *corev1.ServiceAccount:
		kind, name = "ServiceAccount", o.Name
		api := client.CoreV1().ServiceAccounts(o.Namespace)
		if _, err = api.Get(ctx, o.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			_, err = api.Create(ctx, o, metav1.CreateOptions{})
		} // an existing one is kept: the token controller owns its secrets
	case *rbacv1.Role:
		kind, name = "Role", o.Name
		err = upsert(ctx, client.RbacV1().Roles(o.Namespace), o, nil)
	case *policyv1.PodDisruptionBudget:
		kind, name = "PodDisruptionBudget", o.Name
		err = upsert(ctx, client.PolicyV1().PodDisruptionBudgets(o.Namespace), o, nil)
	case *rbacv1.RoleBinding:
		kind, name = "RoleBinding", o.Name
		err = upsert(ctx, client.RbacV1().RoleBindings(o.Namespace), o, nil)
	default:
		return fmt.Errorf("apply: unsupported object %T", obj)
	}
	if err != nil {
		return fmt.Errorf("apply %s %s: %w", kind, name, err)
	}
	return nil
}

// typedAPI is the part of a client-go typed client that upsert uses.
type typedAPI[T metav1.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// upsert creates obj, or updates the existing object of its name from obj, carrying over the
// resource version and whatever keep copies from the live object (fields the server assigned).
func upsert[T metav1.Object](ctx context.Context, api typedAPI[T], obj T, keep func(cur T)) error {
	cur, err := api.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = api.Create(ctx, obj, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	obj.SetResourceVersion(cur.GetResourceVersion())
	if keep != nil {
		keep(cur)
	}
	_, err = api.Update(ctx, obj, metav1.UpdateOptions{})
	return err
}
