package runner

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/scenario"
)

// CustomDeployer runs scenarios against a target described by a --target file: an image it
// deploys (Deployment + NodePort Service in the scenario's namespace), or an existing Deployment
// that it reaches through an extra NodePort Service selecting the same pods (removed afterwards).
// There is no toxiproxy in front of a custom target's dependencies: database faults are skipped.
type CustomDeployer struct {
	Kind   *cluster.Cluster
	Logger *slog.Logger
	// Timeout bounds the wait for the target to be ready (3 minutes when 0).
	Timeout time.Duration
}

// Probe timings given to an image's probes (the file names paths, not timings).
var customProbe = map[string]struct{ period, failure int32 }{
	"startup":   {1, 60},
	"readiness": {1, 2},
	"liveness":  {5, 3},
}

// Preflight implements Preflighter: an image must be built (and, on kind, is loaded); an existing
// Deployment must exist.
func (d CustomDeployer) Preflight(ctx context.Context, c *Cluster, _ []string, spec *scenario.TargetSpec) error {
	if spec == nil {
		return fmt.Errorf("no target file")
	}
	if spec.Image != "" {
		if d.Kind != nil {
			return d.Kind.LoadImages(ctx, spec.Image)
		}
		return nil
	}
	if _, err := c.Client.AppsV1().Deployments(spec.Namespace).Get(ctx, spec.Deployment, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("target %s: deployment %s/%s: %w", spec.Name, spec.Namespace, spec.Deployment, err)
	}
	return nil
}

// Install implements Deployer.
func (d CustomDeployer) Install(ctx context.Context, c *Cluster, req InstallRequest) (*Target, error) {
	spec := req.Custom
	if spec == nil {
		return nil, fmt.Errorf("custom deployer: no target file")
	}
	timeout := d.Timeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	nodePort := cluster.TargetNodePort(req.Slot)
	t := &Target{Namespace: req.Namespace, Container: spec.Name, URL: hostURL(nodePort)}
	var selector map[string]string
	if spec.Image != "" {
		selector = map[string]string{"app": spec.Name}
		dep := customDeployment(spec, req, selector)
		if _, err := c.Client.AppsV1().Deployments(req.Namespace).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("deploy target %s: %w", spec.Name, err)
		}
		t.Deployment, t.Service = spec.Name, spec.Name
		t.Description = "image " + spec.Image
	} else {
		dep, err := c.Client.AppsV1().Deployments(spec.Namespace).Get(ctx, spec.Deployment, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("target %s: deployment %s/%s: %w", spec.Name, spec.Namespace, spec.Deployment, err)
		}
		if dep.Spec.Selector == nil || len(dep.Spec.Selector.MatchLabels) == 0 {
			return nil, fmt.Errorf("target %s: deployment %s has no matchLabels selector", spec.Name, spec.Deployment)
		}
		selector = dep.Spec.Selector.MatchLabels
		t.Namespace, t.Deployment = spec.Namespace, spec.Deployment
		t.Service = fmt.Sprintf("probegate-slot-%d", req.Slot)
		if len(dep.Spec.Template.Spec.Containers) > 0 {
			t.Container = dep.Spec.Template.Spec.Containers[0].Name
		}
		t.Description = fmt.Sprintf("deployment %s/%s", spec.Namespace, spec.Deployment)
	}
	t.Selector = labels.SelectorFromSet(selector).String()
	if spec.HasAdmin() {
		t.AdminPort = spec.Admin.Port
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: t.Service, Labels: map[string]string{LabelManaged: "true"}},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: selector,
			Ports: []corev1.ServicePort{{Name: "http", Port: int32(spec.Port), TargetPort: intstr.FromInt32(int32(spec.Port)),
				NodePort: nodePort}},
		},
	}
	if _, err := c.Client.CoreV1().Services(t.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("target %s: create service %s/%s: %w", spec.Name, t.Namespace, t.Service, err)
	}
	if spec.Deployment != "" {
		t.Cleanup = func(ctx context.Context) error {
			return c.Client.CoreV1().Services(t.Namespace).Delete(ctx, t.Service, metav1.DeleteOptions{})
		}
	}
	if err := d.waitReady(ctx, c, t, spec); err != nil {
		if t.Cleanup != nil {
			_ = t.Cleanup(context.WithoutCancel(ctx))
		}
		return nil, err
	}
	return t, nil
}

func customDeployment(spec *scenario.TargetSpec, req InstallRequest, selector map[string]string) *appsv1.Deployment {
	replicas := int32(req.Replicas)
	ctr := corev1.Container{
		Name:            spec.Name,
		Image:           spec.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: int32(spec.Port)}},
		Env: []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
	}
	for k, v := range spec.Env {
		ctr.Env = append(ctr.Env, corev1.EnvVar{Name: k, Value: v})
	}
	if spec.HasAdmin() {
		ctr.Ports = append(ctr.Ports, corev1.ContainerPort{Name: "admin", ContainerPort: int32(spec.Admin.Port)})
	}
	probe := func(kind, path string) *corev1.Probe {
		if path == "" {
			return nil
		}
		t := customProbe[kind]
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(int32(spec.Port))}},
			PeriodSeconds: t.period, FailureThreshold: t.failure, TimeoutSeconds: 1,
		}
	}
	ctr.StartupProbe = probe("startup", spec.Probes.Startup)
	ctr.ReadinessProbe = probe("readiness", spec.Probes.Readiness)
	ctr.LivenessProbe = probe("liveness", spec.Probes.Liveness)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: spec.Name, Labels: selector},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selector},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{ctr}},
			},
		},
	}
}

// waitReady waits for the Deployment's pods to be available and the target to answer on loopback.
func (d CustomDeployer) waitReady(ctx context.Context, c *Cluster, t *Target, spec *scenario.TargetSpec) error {
	path := spec.Probes.Readiness
	if path == "" {
		path = spec.Path
	}
	last := "not checked yet"
	for {
		dep, err := c.Client.AppsV1().Deployments(t.Namespace).Get(ctx, t.Deployment, metav1.GetOptions{})
		switch {
		case err != nil:
			last = err.Error()
		case dep.Spec.Replicas != nil && dep.Status.AvailableReplicas < *dep.Spec.Replicas:
			last = fmt.Sprintf("%d/%d replicas available", dep.Status.AvailableReplicas, *dep.Spec.Replicas)
		case t.URL == "":
			return nil
		default:
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.URL+path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode < 400 {
					return nil
				}
				last = fmt.Sprintf("GET %s%s: %d", t.URL, path, resp.StatusCode)
			} else {
				last = err.Error()
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("target %s not ready: %s", spec.Name, last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// hostURL is the loopback URL kind publishes nodePort on, or "" when it is not mapped.
func hostURL(nodePort int32) string {
	if hp := cluster.HostPort(nodePort); hp != 0 {
		return fmt.Sprintf("http://127.0.0.1:%d", hp)
	}
	return ""
}
