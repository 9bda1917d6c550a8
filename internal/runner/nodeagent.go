package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/nodeagent"
	"github.com/probegate/probegate/internal/scenario"
)

// The node agent's DaemonSet and the label on its pods.
const (
	nodeAgentName  = "probegate-node-agent"
	nodeAgentLabel = "probegate.dev/node-agent"
)

// nodeAgentReadyTimeout bounds the wait for the node agent's pods.
const nodeAgentReadyTimeout = 2 * time.Minute

// podSecurityEnforce is the Pod Security admission label of a namespace; the node agent's
// namespace needs it "privileged".
const podSecurityEnforce = "pod-security.kubernetes.io/enforce"

// needsNodeAccess reports whether one of sc's faults acts on the processes of a pod's node.
func needsNodeAccess(sc *scenario.Scenario) bool {
	return slices.ContainsFunc(sc.Faults, func(f scenario.Fault) bool {
		return faults.Uses(f.Type, faults.NeedsNodeAccess) || faults.Needs(f.Type, faults.NeedsNodePause)
	})
}

// nodeAgents runs probegate's node agent (cmd/probegate-agent -node) on every node of a cluster
// with no local node containers: a privileged DaemonSet in the host's PID namespace, tolerating
// every taint, reached through the API server's pod proxy with a token of this run's.
type nodeAgents struct {
	client kubernetes.Interface
	ns     string
	image  string
	log    *slog.Logger
	// timeout bounds the wait for every pod to be ready, poll is its interval.
	timeout, poll time.Duration
	// progress is told how many agents are ready while start waits.
	progress func(ready, want int)
}

// start creates the DaemonSet and waits until it runs a ready pod on every node it should, and
// returns the agents by node. It fails early, saying why, when a pod cannot be created (Pod
// Security, a policy) or its image cannot be had. The caller removes the DaemonSet (remove) also
// when start fails.
func (n nodeAgents) start(ctx context.Context) (faults.AgentProcs, error) {
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	ds := nodeAgentDaemonSet(n.ns, n.image, token)
	if _, err := n.client.AppsV1().DaemonSets(n.ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("node agent: create DaemonSet %s/%s: %w%s", n.ns, nodeAgentName, err, n.hint(err.Error()))
	}
	deadline := time.Now().Add(n.timeout)
	lastWant, lastReady := -1, -1
	for {
		ready, want, err := n.check(ctx)
		if err != nil {
			return nil, err
		}
		if want > 0 && len(ready) == want {
			procs := faults.AgentProcs{}
			for node, pod := range ready {
				procs[node] = faults.NodeAgent{Pod: pod, Client: nodeagent.Client{T: podProxy{
					client: n.client, ns: n.ns, pod: pod, port: nodeagent.Port,
					header: map[string]string{nodeagent.TokenHeader: token},
				}}}
			}
			return procs, nil
		}
		if (want != lastWant || len(ready) != lastReady) && n.progress != nil {
			n.progress(len(ready), want)
		}
		lastWant, lastReady = want, len(ready)
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("node agent: %d of %d pods of DaemonSet %s/%s ready after %s (is %s on the nodes? on kind, probegate run loads it; elsewhere push it where the nodes can pull it and pass --agent-image)",
				len(ready), want, n.ns, nodeAgentName, n.timeout, n.image)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("node agent: waiting for its pods: %w", context.Cause(ctx))
		case <-time.After(n.poll):
		}
	}
}

// check reads the DaemonSet's pods: the ready ones by node, how many it should run, and an error
// when one of them, or the DaemonSet's creation of them, failed for good.
func (n nodeAgents) check(ctx context.Context) (map[string]string, int, error) {
	ds, err := n.client.AppsV1().DaemonSets(n.ns).Get(ctx, nodeAgentName, metav1.GetOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("node agent: read DaemonSet %s/%s: %w", n.ns, nodeAgentName, err)
	}
	evs, err := n.client.CoreV1().Events(n.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + nodeAgentName})
	if err == nil {
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Kind == "DaemonSet" && ev.InvolvedObject.Name == nodeAgentName && ev.Reason == "FailedCreate" {
				return nil, 0, fmt.Errorf("node agent: DaemonSet %s/%s cannot create its pods: %s%s", n.ns, nodeAgentName, ev.Message, n.hint(ev.Message))
			}
		}
	}
	pods, err := n.client.CoreV1().Pods(n.ns).List(ctx, metav1.ListOptions{LabelSelector: nodeAgentLabel + "=true"})
	if err != nil {
		return nil, 0, fmt.Errorf("node agent: list its pods: %w", err)
	}
	ready := map[string]string{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if why := podStuck(p); why != "" {
			return nil, 0, fmt.Errorf("node agent: pod %s on node %s: %s%s", p.Name, p.Spec.NodeName, why, n.hint(why))
		}
		if p.DeletionTimestamp == nil && p.Spec.NodeName != "" && faults.PodReady(p) {
			ready[p.Spec.NodeName] = p.Name
		}
	}
	want := int(ds.Status.DesiredNumberScheduled)
	if ds.Status.ObservedGeneration < ds.Generation {
		want = 0 // the controller has not yet counted the nodes
	}
	return ready, want, nil
}

// podStuck says why a pod will not become ready without help (its image cannot be had, its
// container cannot be created or keeps crashing), "" when it may yet.
func podStuck(p *corev1.Pod) string {
	if p.Status.Phase == corev1.PodFailed {
		return "failed: " + p.Status.Message
	}
	for _, cs := range p.Status.ContainerStatuses {
		w := cs.State.Waiting
		if w == nil {
			continue
		}
		switch w.Reason {
		case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName",
			"CreateContainerError", "CreateContainerConfigError", "RunContainerError", "CrashLoopBackOff":
			return w.Reason + ": " + w.Message
		}
	}
	return ""
}

// hint adds what to do about a refusal or an image error, when msg reads like one.
func (n nodeAgents) hint(msg string) string {
	switch {
	case strings.Contains(msg, "PodSecurity") || strings.Contains(msg, "privileged"):
		return fmt.Sprintf(" (the node agent needs privileged pods in the host's PID namespace: label the namespace %s=privileged, which probegate does for its own namespaces, or use a cluster whose admission policy admits them)", podSecurityEnforce)
	case strings.Contains(msg, "Image") || strings.Contains(msg, "image"):
		return fmt.Sprintf(" (is %s on the nodes? on kind, probegate run loads it; elsewhere push it where the nodes can pull it and pass --agent-image)", n.image)
	}
	return ""
}

// remove deletes the DaemonSet and waits (at most 30 s, less when ctx ends) until its pods are
// gone. It works after the run's context was cancelled; the namespace's deletion would remove them
// too, later.
func (n nodeAgents) remove(ctx context.Context) {
	policy := metav1.DeletePropagationBackground
	err := n.client.AppsV1().DaemonSets(n.ns).Delete(ctx, nodeAgentName, metav1.DeleteOptions{PropagationPolicy: &policy})
	if err != nil && !apierrors.IsNotFound(err) {
		n.log.Warn("node agent DaemonSet not deleted (the namespace's deletion removes it)", "err", err)
		return
	}
	for {
		pods, err := n.client.CoreV1().Pods(n.ns).List(ctx, metav1.ListOptions{LabelSelector: nodeAgentLabel + "=true"})
		if err == nil && len(pods.Items) == 0 {
			n.log.Info("node agent removed", "daemonset", nodeAgentName)
			return
		}
		if err == nil {
			// Background propagation leaves the pods to the garbage collector: delete them now.
			zero := int64(0)
			for _, p := range pods.Items {
				_ = n.client.CoreV1().Pods(n.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			}
		}
		select {
		case <-ctx.Done():
			n.log.Warn("node agent pods still there (the namespace's deletion removes them)", "err", context.Cause(ctx))
			return
		case <-time.After(n.poll):
		}
	}
}

// nodeAgentDaemonSet is the node agent on every node: the agent image with -node, privileged and
// root in the host's PID namespace, no API credentials, every taint tolerated.
func nodeAgentDaemonSet(ns, image, token string) *appsv1.DaemonSet {
	labels := map[string]string{nodeAgentLabel: "true", "app.kubernetes.io/name": nodeAgentName}
	privileged, root, no := true, int64(0), false
	grace := int64(1)
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: nodeAgentName, Namespace: ns, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{nodeAgentLabel: "true"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostPID:                       true,
					AutomountServiceAccountToken:  &no,
					EnableServiceLinks:            &no,
					TerminationGracePeriodSeconds: &grace,
					Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{
						Name: "node-agent", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
						Args:  []string{"-node"},
						Env:   []corev1.EnvVar{{Name: nodeagent.TokenEnv, Value: token}},
						Ports: []corev1.ContainerPort{{Name: "api", ContainerPort: nodeagent.Port}},
						SecurityContext: &corev1.SecurityContext{
							Privileged: &privileged, RunAsUser: &root, RunAsGroup: &root, RunAsNonRoot: &no,
						},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(nodeagent.Port)}},
							PeriodSeconds: 1,
						},
					}},
				},
			},
		},
	}
}

// newToken is a fresh random token for one run's node agents.
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("node agent token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// describeAgents lists the agents as pod@node, by node.
func describeAgents(procs faults.AgentProcs) string {
	nodes := make([]string, 0, len(procs))
	for node := range procs {
		nodes = append(nodes, node)
	}
	sort.Strings(nodes)
	out := make([]string, len(nodes))
	for i, node := range nodes {
		out[i] = procs[node].Pod + "@" + node
	}
	return strings.Join(out, ", ")
}
