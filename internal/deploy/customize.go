package deploy

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/probegate/probegate/fixtures/manifests"
	"github.com/probegate/probegate/internal/cluster"
)

// objectsFor decodes manifest name and fills in what opts decide: namespace, NodePorts of the slot,
// target replicas, images and env overrides.
func objectsFor(name string, opts Options) ([]runtime.Object, error) {
	objs, err := manifests.Objects(name)
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		switch o := obj.(type) {
		case *corev1.Service:
			o.Namespace = opts.Namespace
			for i := range o.Spec.Ports {
				if o.Spec.Ports[i].NodePort == 0 {
					continue
				}
				switch o.Name {
				case TargetName:
					o.Spec.Ports[i].NodePort = cluster.TargetNodePort(opts.Slot)
				case ToxiproxyAPIName:
					o.Spec.Ports[i].NodePort = cluster.ToxiproxyNodePort(opts.Slot)
				default:
					return nil, fmt.Errorf("manifest %s: Service %s has a NodePort outside the slot scheme", name, o.Name)
				}
			}
		case *appsv1.Deployment:
			o.Namespace = opts.Namespace
			switch o.Name {
			case TargetName:
				o.Spec.Replicas = &opts.Replicas
				setImage(o, opts.TargetImage)
				setEnv(&o.Spec.Template.Spec.Containers[0], opts.Env)
				if len(opts.Patch) > 0 {
					if err := patchDeployment(o, opts.Patch); err != nil {
						return nil, fmt.Errorf("manifest %s: %w", name, err)
					}
				}
			case PostgresName:
				setImage(o, opts.PostgresImage)
			case ToxiproxyName:
				setImage(o, opts.ToxiproxyImage)
			}
		case *corev1.ConfigMap:
			o.Namespace = opts.Namespace
		case *corev1.ServiceAccount:
			o.Namespace = opts.Namespace
		case *rbacv1.Role:
			o.Namespace = opts.Namespace
		case *policyv1.PodDisruptionBudget:
			o.Namespace = opts.Namespace
		case *rbacv1.RoleBinding:
			o.Namespace = opts.Namespace
			for i := range o.Subjects {
				if o.Subjects[i].Kind == rbacv1.ServiceAccountKind {
					o.Subjects[i].Namespace = opts.Namespace
				}
			}
		default:
			return nil, fmt.Errorf("manifest %s: unsupported object %T", name, obj)
		}
	}
	return objs, nil
}

func setImage(d *appsv1.Deployment, image string) {
	d.Spec.Template.Spec.Containers[0].Image = image
}

// setEnv overrides or appends env vars, in a stable order.
func setEnv(c *corev1.Container, env map[string]string) {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		found := false
		for i := range c.Env {
			if c.Env[i].Name == k {
				c.Env[i].Value, c.Env[i].ValueFrom, found = env[k], nil, true
			}
		}
		if !found {
			c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: env[k]})
		}
	}
}
