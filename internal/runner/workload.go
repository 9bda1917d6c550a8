package runner

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/timeline"
)

// workloadEntry records the workload under test and, from the live pod, the probe and shutdown
// settings of the container under test: terminationGracePeriodSeconds, the container's probes and
// lifecycle, and the pod's probegate.dev/ annotations. Nothing else of the spec is kept (env may
// hold secrets). Readers such as tune take current settings and the patch's target from it.
func workloadEntry(t *deploy.Target, pod *corev1.Pod) (timeline.Entry, error) {
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
	}}, nil
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
