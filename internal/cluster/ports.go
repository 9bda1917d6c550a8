package cluster

import "runtime"

// PortMapping is one kind extraPortMapping: a NodePort on the node published on 127.0.0.1.
type PortMapping struct {
	NodePort int32
	HostPort int
	Purpose  string
}

// PortMappings mirrors kind-config.yaml. Load and control traffic reach the cluster only through
// these loopback ports. Scenarios running in parallel namespaces take one target and one toxiproxy
// slot each.
var PortMappings = []PortMapping{
	{30080, 18080, "target slot 0"},
	{30081, 18081, "target slot 1"},
	{30082, 18082, "target slot 2"},
	{30083, 18083, "target slot 3"},
	{30474, 18474, "toxiproxy API slot 0"},
	{30475, 18475, "toxiproxy API slot 1"},
	{30476, 18476, "toxiproxy API slot 2"},
	{30477, 18477, "toxiproxy API slot 3"},
	{30099, 18099, "cluster smoke test"},
}

// Slots is the number of scenarios that can run side by side, each with its own ports.
const Slots = 4

// DefaultParallel is how many scenarios run side by side when not told: one per CPU (each brings
// its own PostgreSQL, toxiproxy and target pods), at least two, at most Slots. When this machine
// runs several kind nodes (localNodes > 1), each node's kubelet, kube-proxy and pods share its CPUs:
// one per CPU per node, at least one (a 3-node cluster on 2 cores ran its default suite side by
// side with recovery-within LATE in 4 of 12 scenarios, and clean one at a time).
func DefaultParallel(localNodes int) int {
	if localNodes > 1 {
		return min(Slots, max(1, runtime.NumCPU()/localNodes))
	}
	return min(Slots, max(2, runtime.NumCPU()))
}

// TargetNodePort and ToxiproxyNodePort return the NodePorts of a slot; HostPort maps them to loopback.
func TargetNodePort(slot int) int32    { return 30080 + int32(slot) }
func ToxiproxyNodePort(slot int) int32 { return 30474 + int32(slot) }

// HostPort returns the 127.0.0.1 port that publishes nodePort, or 0 when it is not mapped.
func HostPort(nodePort int32) int {
	for _, m := range PortMappings {
		if m.NodePort == nodePort {
			return m.HostPort
		}
	}
	return 0
}
