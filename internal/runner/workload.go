package runner

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/timeline"
)

// workloadEntry records the workload under test and, from the live pod, the probe and shutdown
// settings of the container under test: terminationGracePeriodSeconds, the container's probes and
// lifecycle, and the pod's probegate.dev/ annotations. Nothing else of the spec is kept (env may
// hold secrets). Readers such as tune take current settings and the patch's target from it.
func workloadEntry(t *deploy.Target, pod *corev1.Pod, nodes []corev1.Node) (timeline.Entry, error) {
	kind, name := t.WorkloadKind, t.WorkloadName
	if kind == "" {
		kind, name = "Deployment", t.Deployment
	}
	if name == "" {
		return timeline.Entry{}, fmt.Errorf("the target names no workload")
	}
	c, ok := containerUnderTest(pod.Spec, t.Container)
	if !ok {
		return timeline.Entry{}, fmt.Errorf("pod %s has no container %q", pod.Name, t.Container)
	}
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: pod.Spec.TerminationGracePeriodSeconds,
		Containers: []corev1.Container{{
			Name: c.Name, LivenessProbe: c.LivenessProbe, ReadinessProbe: c.ReadinessProbe,
			StartupProbe: c.StartupProbe, Lifecycle: c.Lifecycle,
		}},
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return timeline.Entry{}, fmt.Errorf("encode the settings of container %s: %w", c.Name, err)
	}
	ann := maps.Clone(pod.Annotations)
	maps.DeleteFunc(ann, func(k, _ string) bool { return !strings.HasPrefix(k, "probegate.dev/") })
	if len(ann) == 0 {
		ann = nil
	}
	return timeline.Entry{Kind: timeline.KindWorkload, Workload: &timeline.WorkloadSpec{
		Kind: kind, Name: name, Container: c.Name, PodSpec: raw, Annotations: ann,
		Nodes: placement(pod.Spec, nodes),
	}}, nil
}

// placement returns the nodes a pod with spec could be scheduled on — not cordoned, every
// NoSchedule and NoExecute taint tolerated, its nodeSelector matched — with their zones, sorted by
// name. Required node affinity is not evaluated: a node it excludes still counts.
func placement(spec corev1.PodSpec, nodes []corev1.Node) []timeline.NodeZone {
	var out []timeline.NodeZone
	for _, n := range nodes {
		if n.Spec.Unschedulable || !tolerates(spec.Tolerations, n.Spec.Taints) {
			continue
		}
		if !labels.SelectorFromSet(spec.NodeSelector).Matches(labels.Set(n.Labels)) {
			continue
		}
		out = append(out, timeline.NodeZone{Node: n.Name, Zone: n.Labels[corev1.LabelTopologyZone]})
	}
	slices.SortFunc(out, func(a, b timeline.NodeZone) int { return strings.Compare(a.Node, b.Node) })
	return out
}

// tolerates reports whether tolerations tolerate every NoSchedule and NoExecute taint.
func tolerates(tolerations []corev1.Toleration, taints []corev1.Taint) bool {
	for i := range taints {
		t := &taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !slices.ContainsFunc(tolerations, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(klog.Background(), t, false) }) {
			return false
		}
	}
	return true
}

// containerUnderTest is the named container, else the first with a probe, else the first.
func containerUnderTest(spec corev1.PodSpec, name string) (corev1.Container, bool) {
	for _, c := range spec.Containers {
		if c.Name == name {
			return c, true
		}
	}
	if name != "" {
		return corev1.Container{}, false
	}
	for _, c := range spec.Containers {
		if c.LivenessProbe != nil || c.ReadinessProbe != nil || c.StartupProbe != nil {
			return c, true
		}
	}
	if len(spec.Containers) == 0 {
		return corev1.Container{}, false
	}
	return spec.Containers[0], true
}
