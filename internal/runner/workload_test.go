package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/deploy"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWorkloadEntryKeepsOnlyProbeAndShutdownSettings(t *testing.T) {
	grace := int64(25)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Annotations: map[string]string{
			"probegate.dev/drain-seconds": "10", "other.io/secret": "x"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{
				{Name: "sidecar", Image: "proxy"},
				{Name: "web", Image: "web:1", Env: []corev1.EnvVar{{Name: "TOKEN", Value: "s3cret"}},
					ReadinessProbe: &corev1.Probe{PeriodSeconds: 2}},
			},
		},
	}
	e, err := workloadEntry(&deploy.Target{WorkloadKind: "StatefulSet", WorkloadName: "web", Container: "web"}, pod, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := e.Workload
	if w.Kind != "StatefulSet" || w.Name != "web" || w.Container != "web" {
		t.Fatalf("workload %+v", w)
	}
	if len(w.Annotations) != 1 || w.Annotations["probegate.dev/drain-seconds"] != "10" {
		t.Errorf("annotations %v, want only probegate.dev/ ones", w.Annotations)
	}
	var spec corev1.PodSpec
	if err := json.Unmarshal(w.PodSpec, &spec); err != nil {
		t.Fatal(err)
	}
	if len(spec.Containers) != 1 || spec.Containers[0].Image != "" || spec.Containers[0].Env != nil {
		t.Errorf("recorded more than the settings: %s", w.PodSpec)
	}
	if spec.Containers[0].ReadinessProbe.PeriodSeconds != 2 || *spec.TerminationGracePeriodSeconds != 25 {
		t.Errorf("settings lost: %s", w.PodSpec)
	}
	if _, err := workloadEntry(&deploy.Target{Deployment: "web", Container: "nope"}, pod, nil); err == nil {
		t.Error("a missing container was not reported")
	}
	e, err = workloadEntry(&deploy.Target{Deployment: "web"}, pod, nil)
	if err != nil || e.Workload.Kind != "Deployment" || e.Workload.Container != "web" {
		t.Errorf("default container: %+v, %v", e.Workload, err)
	}
}

func TestPlacementIsTheNodesThePodsCanRunOn(t *testing.T) {
	node := func(name, zone string, mod func(*corev1.Node)) corev1.Node {
		n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"disk": "ssd"}}}
		if zone != "" {
			n.Labels[corev1.LabelTopologyZone] = zone
		}
		if mod != nil {
			mod(&n)
		}
		return n
	}
	cp := corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}
	nodes := []corev1.Node{
		node("w2", "zone-b", nil),
		node("cp", "", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{cp} }),
		node("w1", "zone-a", nil),
		node("cordoned", "zone-c", func(n *corev1.Node) { n.Spec.Unschedulable = true }),
		node("hdd", "zone-d", func(n *corev1.Node) { n.Labels["disk"] = "hdd" }),
		node("soft", "zone-e", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectPreferNoSchedule}}
		}),
	}
	names := func(spec corev1.PodSpec) string {
		var out []string
		for _, n := range placement(spec, nodes) {
			out = append(out, n.Node+"@"+n.Zone)
		}
		return strings.Join(out, " ")
	}
	if got, want := names(corev1.PodSpec{}), "hdd@zone-d soft@zone-e w1@zone-a w2@zone-b"; got != want {
		t.Errorf("no tolerations: %q, want %q", got, want)
	}
	tolerant := corev1.PodSpec{NodeSelector: map[string]string{"disk": "ssd"},
		Tolerations: []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists}}}
	if got, want := names(tolerant), "cp@ soft@zone-e w1@zone-a w2@zone-b"; got != want {
		t.Errorf("tolerating the control plane, on ssd: %q, want %q", got, want)
	}
}
