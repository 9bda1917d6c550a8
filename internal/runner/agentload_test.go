package runner

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/cluster"
)

// TestServicePort: in-cluster load goes to the Service port the host load would reach (the one
// published at the target's loopback URL), else the first TCP port; a Service with no TCP port is
// refused.
func TestServicePort(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
		{Name: "grpc", Port: 9000, NodePort: 31000},
		{Name: "http", Port: 80, NodePort: cluster.TargetNodePort(1)},
	}}}
	url := "http://127.0.0.1:" + strconv.Itoa(cluster.HostPort(cluster.TargetNodePort(1))) + "/slow"
	for _, tc := range []struct {
		url  string
		want int32
	}{{url, 80}, {"", 9000}, {"http://127.0.0.1:1/", 9000}} {
		if got, err := servicePort(svc, tc.url); err != nil || got != tc.want {
			t.Errorf("servicePort(%q) = %d, %v; want %d", tc.url, got, err, tc.want)
		}
	}
	udp := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP}}}}
	if _, err := servicePort(udp, ""); err == nil {
		t.Error("a UDP-only Service was accepted")
	}
}

// TestAgentPodResources: an agent requests CPU and memory (Burstable, not BestEffort, so node
// pressure does not evict it first) and has no CPU limit to throttle its sends.
func TestAgentPodResources(t *testing.T) {
	c := agentPod("ns", "a0", "probegate/agent:dev").Spec.Containers[0]
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("agent requests %v: want CPU and memory", c.Resources.Requests)
	}
	if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		t.Errorf("agent has a CPU limit %v: throttling would delay sends", c.Resources.Limits.Cpu())
	}
	if c.Resources.Limits.Memory().Cmp(*c.Resources.Requests.Memory()) < 0 {
		t.Errorf("memory limit %v below the request %v", c.Resources.Limits.Memory(), c.Resources.Requests.Memory())
	}
}
