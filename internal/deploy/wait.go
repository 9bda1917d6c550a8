package deploy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/probegate/probegate/internal/pause"
)

// pollInterval is how often readiness is re-checked while waiting.
var pollInterval = 500 * time.Millisecond

// poll calls check until it reports done, an error, or ctx ends; then it returns what check last said
// was missing, wrapped with what was awaited.
func poll(ctx context.Context, what string, check func(context.Context) (done bool, missing string, err error)) error {
	missing := "not checked yet"
	for {
		done, m, err := check(ctx)
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if done {
			return nil
		}
		if m != "" {
			missing = m
		}
		if pause.For(ctx, pollInterval) != nil {
			return fmt.Errorf("%s did not become ready: %s", what, missing)
		}
	}
}

// deploymentReady reports whether the Deployment's current generation is fully rolled out and
// ready; when not, it says why, naming the first pod that is not.
func deploymentReady(client kubernetes.Interface, ns, name string, want int32) func(context.Context) (bool, string, error) {
	return func(ctx context.Context) (bool, string, error) {
		d, err := client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		st := d.Status
		if st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want && st.ReadyReplicas == want &&
			st.AvailableReplicas == want && st.Replicas == want {
			return true, "", nil
		}
		missing := fmt.Sprintf("%d/%d ready, %d updated, %d total", st.ReadyReplicas, want, st.UpdatedReplicas, st.Replicas)
		if why := podTrouble(ctx, client, ns, d); why != "" {
			if pullFailed(why) {
				return false, "", fmt.Errorf("%s: the image is not in the cluster, and nothing is ever pulled from a registry: load it first", why)
			}
			missing += "; " + why
		}
		return false, missing, nil
	}
}

// pullFailed reports whether a pod's trouble is an image pull, which cannot succeed offline.
func pullFailed(why string) bool {
	return strings.Contains(why, "ErrImagePull") || strings.Contains(why, "ImagePullBackOff")
}

// podTrouble describes the first unready pod of d (image missing, crash loop, failing probe...).
func podTrouble(ctx context.Context, client kubernetes.Interface, ns string, d *appsv1.Deployment) string {
	sel := metav1.FormatLabelSelector(d.Spec.Selector)
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return ""
	}
	for _, p := range pods.Items {
		if why := podWhy(p); why != "" {
			return "pod " + p.Name + ": " + why
		}
	}
	return ""
}

func podWhy(p corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return ""
	}
	for _, c := range p.Status.ContainerStatuses {
		switch {
		case c.State.Waiting != nil:
			why := fmt.Sprintf("container %s waiting: %s", c.Name, c.State.Waiting.Reason)
			if m := c.State.Waiting.Message; m != "" {
				why += " (" + firstLine(m) + ")"
			}
			if t := c.LastTerminationState.Terminated; t != nil {
				why += fmt.Sprintf("; last exit %d %s after %d restarts", t.ExitCode, t.Reason, c.RestartCount)
			}
			return why
		case !c.Ready:
			why := fmt.Sprintf("container %s running but not ready", c.Name)
			if c.RestartCount > 0 {
				why += fmt.Sprintf(" (%d restarts)", c.RestartCount)
			}
			return why
		}
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status != corev1.ConditionTrue {
			return "not scheduled: " + firstLine(cond.Message)
		}
	}
	if p.Status.Phase != corev1.PodRunning {
		return "phase " + string(p.Status.Phase)
	}
	return ""
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// podsSettled reports whether exactly want pods match selector, so that no pod of a previous
// variant or rollout is still terminating when Install returns.
func podsSettled(client kubernetes.Interface, ns, selector string, want int32) func(context.Context) (bool, string, error) {
	return func(ctx context.Context) (bool, string, error) {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, "", err
		}
		n := int32(len(pods.Items))
		return n == want, fmt.Sprintf("%d pods, want %d (old pods still terminating)", n, want), nil
	}
}

// endpointsReady reports whether the Service's EndpointSlices list want ready, non-terminating
// endpoints: the point at which kube-proxy routes to every replica.
func endpointsReady(client kubernetes.Interface, ns, svc string, want int32) func(context.Context) (bool, string, error) {
	return func(ctx context.Context) (bool, string, error) {
		slices, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{
			LabelSelector: discoveryv1.LabelServiceName + "=" + svc,
		})
		if err != nil {
			return false, "", err
		}
		ready := int32(0)
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				c := e.Conditions
				if (c.Ready == nil || *c.Ready) && (c.Terminating == nil || !*c.Terminating) {
					ready++
				}
			}
		}
		return ready == want, fmt.Sprintf("%d/%d ready endpoints", ready, want), nil
	}
}

// httpOK reports whether GET url answers 200 (through kind's port mapping and kube-proxy).
func httpOK(url string) func(context.Context) (bool, string, error) {
	return httpCheck(url, 2*time.Second, func(code int) (bool, error) { return code == http.StatusOK, nil })
}

// httpCheck GETs url and lets judge decide on the status code; a transport error is "not yet".
func httpCheck(url string, timeout time.Duration, judge func(code int) (bool, error)) func(context.Context) (bool, string, error) {
	client := &http.Client{Timeout: timeout}
	return func(ctx context.Context) (bool, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return false, "", nil
			}
			return false, "GET " + url + ": " + err.Error(), nil
		}
		resp.Body.Close()
		done, err := judge(resp.StatusCode)
		return done, fmt.Sprintf("GET %s: %s", url, resp.Status), err
	}
}

// answersGRPC is a readiness check for a gRPC port: a call of the standard health service through
// url's host answered by a server. Any answer counts — SERVING, NOT_SERVING for the whole server,
// or Unimplemented from a server without the health service: the Service routed the call to a pod.
// A TCP connect proves nothing here: Docker's proxy in front of 127.0.0.1 accepts every connection
// whether or not anything behind it answers.
func answersGRPC(url string) func(context.Context) (bool, string, error) {
	addr := strings.TrimPrefix(url, "http://")
	return func(ctx context.Context) (bool, string, error) {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return false, "", fmt.Errorf("gRPC client for %s: %w", addr, err)
		}
		defer conn.Close()
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		_, err = healthpb.NewHealthClient(conn).Check(cctx, &healthpb.HealthCheckRequest{})
		switch status.Code(err) {
		case codes.OK, codes.Unimplemented, codes.NotFound, codes.PermissionDenied, codes.Unauthenticated, codes.FailedPrecondition:
			return true, "", nil
		}
		if ctx.Err() != nil {
			return false, "", nil
		}
		return false, "gRPC health check on " + addr + ": " + err.Error(), nil
	}
}
