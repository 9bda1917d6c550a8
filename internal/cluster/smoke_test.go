package cluster_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/testcluster"
)

// TestIntegrationClusterSmoke proves the offline cluster does what every scenario relies on: the
// node is fenced and Ready, CoreDNS resolves Service names, probes gate EndpointSlices, kube-proxy
// routes a loopback NodePort, a deleted pod's endpoint goes terminating before it disappears, and a
// failing liveness probe restarts a container.
func TestIntegrationClusterSmoke(t *testing.T) {
	env := testcluster.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cs := env.Client

	fences, err := env.Cluster.Fences(ctx)
	if err != nil || len(fences) == 0 {
		t.Fatalf("read fences: %v (%d nodes)", err, len(fences))
	}
	for _, fence := range fences {
		if !fence.First() {
			t.Fatalf("node egress fence incomplete or not the first rule of OUTPUT and FORWARD: %s", fence)
		}
		t.Logf("egress fence: %s", fence)
	}

	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("list nodes: %v (%d nodes)", err, len(nodes.Items))
	}
	for _, n := range nodes.Items {
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		if !ready {
			t.Fatalf("node %s is not Ready", n.Name)
		}
	}

	image := env.GoImage(t, "./internal/cluster/testdata/smokeserver", "probegate/smoke")
	ns := env.Namespace(t)
	labels := map[string]string{"app": "smoke"}
	container := func(env ...corev1.EnvVar) corev1.Container {
		return corev1.Container{
			Name: "smoke", Image: image, ImagePullPolicy: corev1.PullNever, Env: env,
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}},
				PeriodSeconds: 1, FailureThreshold: 1},
			LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
				PeriodSeconds: 1, FailureThreshold: 2},
		}
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "smoke"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](10),
					Containers:                    []corev1.Container{container(corev1.EnvVar{Name: "DRAIN_DELAY", Value: "3s"})},
				},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "smoke"},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, Selector: labels,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: 30099}},
		},
	}
	svcObj, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	poll(t, ctx, "deployment 2/2 ready", func() (bool, string) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "smoke", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == 2, fmt.Sprintf("%d ready", d.Status.ReadyReplicas)
	})
	poll(t, ctx, "2 ready endpoints", func() (bool, string) {
		eps := endpoints(ctx, t, env, ns)
		n := 0
		for _, e := range eps {
			if e.ready {
				n++
			}
		}
		return n == 2, fmt.Sprintf("%v", eps)
	})

	url := fmt.Sprintf("http://127.0.0.1:%d", cluster.HostPort(30099))
	poll(t, ctx, "HTTP 200 through kube-proxy on "+url, func() (bool, string) {
		code, body := get(url + "/")
		return code == 200 && strings.HasPrefix(body, "ok smoke-"), fmt.Sprintf("%d %q", code, body)
	})
	name := fmt.Sprintf("smoke.%s.svc.cluster.local", ns)
	poll(t, ctx, "CoreDNS resolves "+name, func() (bool, string) {
		code, body := get(url + "/resolve?name=" + name)
		return code == 200 && strings.TrimSpace(body) == svcObj.Spec.ClusterIP, fmt.Sprintf("%d %q (ClusterIP %s)", code, body, svcObj.Spec.ClusterIP)
	})

	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=smoke"})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("list pods: %v", err)
	}
	victim := pods.Items[0].Name
	if err := cs.CoreV1().Pods(ns).Delete(ctx, victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "deleted pod's endpoint ready=false terminating=true", func() (bool, string) {
		for _, e := range endpoints(ctx, t, env, ns) {
			if e.pod == victim {
				return !e.ready && e.terminating, fmt.Sprintf("%+v", e)
			}
		}
		return false, "endpoint gone before it was seen terminating"
	})
	poll(t, ctx, "deleted pod's endpoint removed", func() (bool, string) {
		for _, e := range endpoints(ctx, t, env, ns) {
			if e.pod == victim {
				return false, fmt.Sprintf("%+v", e)
			}
		}
		return true, ""
	})

	failing := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "liveness-fails"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []corev1.Container{container(corev1.EnvVar{Name: "LIVENESS_FAIL_AFTER", Value: "3s"})},
		},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, failing, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "failing liveness probe raises restartCount", func() (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "liveness-fails", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 {
			return false, "no status yet"
		}
		st := p.Status.ContainerStatuses[0]
		return st.RestartCount >= 1, fmt.Sprintf("restartCount=%d", st.RestartCount)
	})
}

type endpoint struct {
	pod                         string
	ready, serving, terminating bool
}

func endpoints(ctx context.Context, t *testing.T, env *testcluster.Env, ns string) []endpoint {
	slices, err := env.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=smoke"})
	if err != nil {
		t.Fatalf("list endpointslices: %v", err)
	}
	var out []endpoint
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			ep := endpoint{ready: true, serving: true}
			if e.TargetRef != nil {
				ep.pod = e.TargetRef.Name
			}
			if e.Conditions.Ready != nil {
				ep.ready = *e.Conditions.Ready
			}
			if e.Conditions.Serving != nil {
				ep.serving = *e.Conditions.Serving
			}
			if e.Conditions.Terminating != nil {
				ep.terminating = *e.Conditions.Terminating
			}
			out = append(out, ep)
		}
	}
	return out
}

func get(url string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// poll waits up to a minute for cond, failing the test with cond's last explanation.
func poll(t *testing.T, ctx context.Context, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ok, why := cond()
		last = why
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not reached within a minute (last: %s)", what, last)
	}
	t.Logf("%s (after %s)", what, time.Since(start).Round(100*time.Millisecond))
}
