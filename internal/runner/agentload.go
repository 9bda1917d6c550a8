package runner

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/loadgen"
	"github.com/probegate/probegate/loadgen/agent"
)

// agentLabel marks the load agents' pods.
const agentLabel = "probegate.dev/load-agent"

// agentReadyTimeout bounds the wait for the agents' pods.
const agentReadyTimeout = 2 * time.Minute

// agentLoad drives the load from n agent pods in the scenario's namespace, which reach the target
// through its ClusterIP (kube-proxy on each agent's node is in the path) and are reached by the
// harness through the API server's pod proxy only.
type agentLoad struct {
	client kubernetes.Interface
	n      int
	image  string
	log    *slog.Logger
}

// Start implements loadStarter.
func (a agentLoad) Start(ctx context.Context, spec loadSpec, tl *timeline.Timeline) (loadRun, error) {
	if spec.Protocol != "" && spec.Protocol != scenario.LoadHTTP {
		return nil, fmt.Errorf("in-cluster load speaks HTTP only, the target %s", spec.Protocol)
	}
	if spec.Namespace == "" || spec.Service == "" {
		return nil, fmt.Errorf("in-cluster load needs the target's Service (namespace %q, service %q)", spec.Namespace, spec.Service)
	}
	svc, err := a.client.CoreV1().Services(spec.Namespace).Get(ctx, spec.Service, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("in-cluster load: target service: %w", err)
	}
	port, err := servicePort(svc, spec.URL)
	if err != nil {
		return nil, err
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return nil, fmt.Errorf("in-cluster load: service %s/%s has no cluster IP", spec.Namespace, spec.Service)
	}
	pods, err := a.createAgents(ctx, spec.Namespace)
	if err != nil {
		return nil, err
	}
	run := &agentRun{client: a.client, ns: spec.Namespace, pods: pods, log: a.log}
	ts := make([]agent.Transport, len(pods))
	sources := make([]string, len(pods))
	for i, p := range pods {
		ts[i] = podProxy{client: a.client, ns: spec.Namespace, pod: p, port: agent.Port}
		sources[i] = p
		if got, err := a.client.CoreV1().Pods(spec.Namespace).Get(ctx, p, metav1.GetOptions{}); err == nil && got.Spec.NodeName != "" {
			sources[i] = p + "@" + got.Spec.NodeName
		}
	}
	target := fmt.Sprintf("http://%s:%d%s", svc.Spec.ClusterIP, port, spec.Path)
	g, err := agent.Start(ctx, ts, agent.Config{
		Load: agent.StartRequest{
			URL: target, AllowHost: svc.Spec.ClusterIP, Rate: float64(spec.Rate), Duration: spec.Duration,
			Timeout: spec.Timeout, KeepAlive: spec.KeepAlive, Clients: spec.Clients, PodHeader: spec.PodHeader,
			IgnorePodHeader: spec.IgnorePodHeader,
		},
		Timeline: tl,
		Sources:  sources,
		Logger:   a.log,
	})
	if err != nil {
		run.removeAgents()
		return nil, fmt.Errorf("in-cluster load: %w", err)
	}
	run.group = g
	return run, nil
}

// servicePort is the Service port the load goes to: the one published at the loopback URL the
// host load would use when there is one, else the first TCP port.
func servicePort(svc *corev1.Service, hostURL string) (int32, error) {
	if u, err := url.Parse(hostURL); err == nil && u.Port() != "" {
		want, _ := strconv.Atoi(u.Port())
		for _, p := range svc.Spec.Ports {
			if p.NodePort != 0 && cluster.HostPort(p.NodePort) == want {
				return p.Port, nil
			}
		}
	}
	for _, p := range svc.Spec.Ports {
		if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
			return p.Port, nil
		}
	}
	return 0, fmt.Errorf("in-cluster load: service %s/%s has no TCP port", svc.Namespace, svc.Name)
}

// createAgents creates the agent pods, spread over the nodes where the scheduler can, and waits
// until each answers its readiness probe.
func (a agentLoad) createAgents(ctx context.Context, ns string) ([]string, error) {
	var names []string
	for i := range a.n {
		p := agentPod(ns, fmt.Sprintf("probegate-load-agent-%d", i), a.image)
		if _, err := a.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			deletePods(a.client, ns, names, a.log)
			return nil, fmt.Errorf("in-cluster load: create agent pod: %w", err)
		}
		names = append(names, p.Name)
	}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, agentReadyTimeout, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			p, err := a.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
				return false, fmt.Errorf("agent pod %s ended (%s): %s", name, p.Status.Phase, p.Status.Message)
			}
			if !faults.PodReady(p) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		deletePods(a.client, ns, names, a.log)
		return nil, fmt.Errorf("in-cluster load: agent pods not ready within %s (is %s in the cluster?): %w", agentReadyTimeout, a.image, err)
	}
	return names, nil
}

// agentPod is one load agent: the agent image, a readiness probe on its control port, and a
// preference for a node no other agent of the run is on.
func agentPod(ns, name, image string) *corev1.Pod {
	grace := int64(1)
	labels := map[string]string{agentLabel: "true", "app.kubernetes.io/name": "probegate-load-agent"}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "agent", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
				Ports: []corev1.ContainerPort{{Name: "control", ContainerPort: agent.Port}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(agent.Port)}},
					PeriodSeconds: 1,
				},
				// Requests make the agent Burstable, not BestEffort (the first evicted under node
				// pressure); small, as the fixture's, so many agents fit a small node (several
				// scenarios side by side run two each); no CPU limit, whose throttling
				// would show up as late sends. The memory limit is far above the measured peak
				// (agent-mem-peak ≈ 13 MiB): records stream out, nothing accumulates.
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
				},
			}},
			// Agents spread over nodes, and the first takes the control plane when it can (the target's
			// pods do not run there on a cluster with workers): a node fault on a worker (node-loss
			// chooses a node without agents) then still finds one.
			Tolerations: []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
					Weight: 50,
					Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.NodeSelectorOpExists},
					}},
				}},
			}, PodAntiAffinity: &corev1.PodAntiAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
					Weight: 100,
					PodAffinityTerm: corev1.PodAffinityTerm{
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{agentLabel: "true"}},
						TopologyKey:   corev1.LabelHostname,
					},
				}},
			}},
		},
	}
}

func deletePods(client kubernetes.Interface, ns string, names []string, log *slog.Logger) {
	for _, name := range names {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
		cancel()
		if err != nil && !apierrors.IsNotFound(err) {
			log.Warn("agent pod not deleted (the namespace's deletion removes it)", "pod", name, "err", err)
		}
	}
}

// agentRun is in-cluster load in progress.
type agentRun struct {
	client kubernetes.Interface
	ns     string
	pods   []string
	group  *agent.Group
	log    *slog.Logger
}

func (r *agentRun) SetRate(rate float64) float64 { return r.group.SetRate(rate) }
func (r *agentRun) Stop()                        { r.group.Stop() }
func (r *agentRun) Counts() loadgen.Counts       { return r.group.Counts() }

// ServedBy counts the requests received so far by the pod that served them.
func (r *agentRun) ServedBy() map[string]uint64 {
	out := map[string]uint64{}
	for _, q := range r.group.Requests() {
		if q.Pod != "" {
			out[q.Pod]++
		}
	}
	return out
}

// Wait collects every agent's requests, then removes the agents.
func (r *agentRun) Wait() ([]timeline.Request, error) {
	reqs, err := r.group.Wait()
	r.removeAgents()
	if err != nil {
		return reqs, fmt.Errorf("in-cluster load from %d agents: %w", len(r.pods), err)
	}
	return reqs, nil
}

func (r *agentRun) removeAgents() { deletePods(r.client, r.ns, r.pods, r.log) }
