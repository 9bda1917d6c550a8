package faults

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// DefaultBootstrapEnv is the bundled target's setting for its simulated bootstrap work.
const DefaultBootstrapEnv = "BOOTSTRAP_DURATION"

// ColdStart rolls the Deployment with a longer bootstrap: it sets the container's bootstrap env var
// to Bootstrap, so every new pod starts cold (the startup probe must cover it). Revert restores the
// previous value (another rollout) unless Restore is false.
type ColdStart struct {
	Recorder
	state
	Client     kubernetes.Interface
	Namespace  string
	Deployment string
	Container  string // the first container when empty
	Env        string // DefaultBootstrapEnv when empty
	Bootstrap  time.Duration
	Restore    bool

	prev *corev1.EnvVar // the value before Inject; nil when unset
}

// NewColdStart returns the cold-start fault; it restores the old setting on revert.
func NewColdStart(rec Recorder, client kubernetes.Interface, namespace, deployment, container string, bootstrap time.Duration) *ColdStart {
	rec.Type = TypeColdStart
	return &ColdStart{Recorder: rec, Client: client, Namespace: namespace, Deployment: deployment,
		Container: container, Env: DefaultBootstrapEnv, Bootstrap: bootstrap, Restore: true}
}

// Type implements Fault.
func (c *ColdStart) Type() string { return TypeColdStart }

// Inject sets the bootstrap env var and so starts a rollout.
func (c *ColdStart) Inject(ctx context.Context) error {
	if !c.begin(true) {
		c.end(true)
		return nil
	}
	var prev *corev1.EnvVar
	gen, err := c.update(ctx, func(ctr *corev1.Container) {
		prev = setEnv(ctr, c.env(), c.Bootstrap.String())
	})
	if err != nil {
		c.end(false)
		return fmt.Errorf("cold-start: %w", err)
	}
	c.prev = prev
	was := "unset"
	if prev != nil {
		was = prev.Value
	}
	c.record("inject", c.Deployment, "", fmt.Sprintf("%s=%s (was %s): rolling deployment %s", c.env(), c.Bootstrap, was, c.Deployment),
		map[string]string{"bootstrap": c.Bootstrap.String(), "env": c.env(), "previous": was})
	c.end(true)
	observeRollout(ctx, c.Recorder, c.Client, c.Namespace, c.Deployment, gen)
	return nil
}

// Revert restores the previous bootstrap setting (when Restore is set).
func (c *ColdStart) Revert(ctx context.Context) error {
	if !c.begin(false) {
		c.end(false)
		return nil
	}
	if !c.Restore {
		c.end(false)
		return nil
	}
	prev := c.prev
	gen, err := c.update(ctx, func(ctr *corev1.Container) {
		if prev == nil {
			removeEnv(ctr, c.env())
		} else {
			setEnv(ctr, c.env(), prev.Value)
		}
	})
	if err != nil {
		c.end(true)
		return fmt.Errorf("cold-start revert: %w", err)
	}
	was := "unset"
	if prev != nil {
		was = prev.Value
	}
	c.record("revert", c.Deployment, "", fmt.Sprintf("%s restored to %s: rolling deployment %s", c.env(), was, c.Deployment),
		map[string]string{"env": c.env(), "restored": was})
	c.end(false)
	observeRollout(ctx, c.Recorder, c.Client, c.Namespace, c.Deployment, gen)
	return nil
}

func (c *ColdStart) env() string {
	if c.Env == "" {
		return DefaultBootstrapEnv
	}
	return c.Env
}

// update applies change to the target container of the Deployment, retrying on conflicts, and
// returns the new generation.
func (c *ColdStart) update(ctx context.Context, change func(*corev1.Container)) (int64, error) {
	var gen int64
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := c.Client.AppsV1().Deployments(c.Namespace).Get(ctx, c.Deployment, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ctr, err := findContainer(d, c.Container)
		if err != nil {
			return err
		}
		change(ctr)
		d, err = c.Client.AppsV1().Deployments(c.Namespace).Update(ctx, d, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		gen = d.Generation
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("update deployment %s/%s: %w", c.Namespace, c.Deployment, err)
	}
	return gen, nil
}

func findContainer(d *appsv1.Deployment, name string) (*corev1.Container, error) {
	cs := d.Spec.Template.Spec.Containers
	for i := range cs {
		if name == "" || cs[i].Name == name {
			return &cs[i], nil
		}
	}
	return nil, fmt.Errorf("deployment %s has no container %q", d.Name, name)
}

// setEnv sets name=value on ctr and returns the previous variable (nil when there was none).
func setEnv(ctr *corev1.Container, name, value string) *corev1.EnvVar {
	for i := range ctr.Env {
		if ctr.Env[i].Name == name {
			prev := ctr.Env[i]
			ctr.Env[i] = corev1.EnvVar{Name: name, Value: value}
			return &prev
		}
	}
	ctr.Env = append(ctr.Env, corev1.EnvVar{Name: name, Value: value})
	return nil
}

func removeEnv(ctr *corev1.Container, name string) {
	out := ctr.Env[:0]
	for _, e := range ctr.Env {
		if e.Name != name {
			out = append(out, e)
		}
	}
	ctr.Env = out
}
