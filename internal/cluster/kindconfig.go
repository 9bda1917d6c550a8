package cluster

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/probegate/probegate"
)

// MaxWorkers bounds Options.Workers: each worker is a kubelet, containerd and kube-proxy more on the
// same machine.
const MaxWorkers = 8

// defaultPodSubnet is kind's pod subnet when its config names none.
const defaultPodSubnet = "10.244.0.0/16"

// zoneLabel is the well-known label of a node's zone.
const zoneLabel = "topology.kubernetes.io/zone"

// WorkerZone is the zone of the i-th worker (from 0): zone-a, zone-b, … — each worker its own zone,
// so that a scenario can judge spread across zones on one machine.
func WorkerZone(i int) string { return "zone-" + string(rune('a'+i%26)) }

// workerConfig returns the kind config base with n worker nodes appended to its nodes, each
// labelled with its zone (WorkerZone), comments kept. The host port mappings stay on the control plane: a host port can be published only once,
// and NodePorts answer on every node.
func workerConfig(base []byte, n int) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(base, &doc); err != nil {
		return nil, fmt.Errorf("parse kind config: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("kind config is not a mapping")
	}
	root := doc.Content[0]
	var nodes *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "nodes" {
			nodes = root.Content[i+1]
		}
	}
	if nodes == nil || nodes.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("kind config has no list of nodes")
	}
	for i := range n {
		labels := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: zoneLabel}, {Kind: yaml.ScalarNode, Value: WorkerZone(i)},
		}}
		nodes.Content = append(nodes.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "role"}, {Kind: yaml.ScalarNode, Value: "worker"},
			{Kind: yaml.ScalarNode, Value: "labels"}, labels,
		}})
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("write kind config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("write kind config: %w", err)
	}
	return b.Bytes(), nil
}

// writeWorkerConfig writes the embedded kind config with n workers to the cache and returns its
// path (CacheDir()/kind-config-<n>w.yaml), replacing the file atomically.
func writeWorkerConfig(n int) (string, error) {
	data, err := workerConfig(probegate.KindConfig, n)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(CacheDir(), 0o755); err != nil {
		return "", fmt.Errorf("create cache dir: %w", err)
	}
	path := filepath.Join(CacheDir(), fmt.Sprintf("kind-config-%dw.yaml", n))
	tmp, err := os.CreateTemp(CacheDir(), ".kind-config-*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// kindConfigFacts is what Create needs to know of a kind config.
type kindConfigFacts struct {
	PodSubnet netip.Prefix // the cluster's pod CIDR, every node's podCIDR within it
	Nodes     int          // control planes and workers
}

// readKindConfig reads the pod subnet and node count of the kind config at path.
func readKindConfig(path string) (kindConfigFacts, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return kindConfigFacts{}, fmt.Errorf("read kind config: %w", err)
	}
	var cfg struct {
		Networking struct {
			PodSubnet string `yaml:"podSubnet"`
		} `yaml:"networking"`
		Nodes []struct {
			Role string `yaml:"role"`
		} `yaml:"nodes"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return kindConfigFacts{}, fmt.Errorf("parse kind config %s: %w", path, err)
	}
	subnet := cfg.Networking.PodSubnet
	if subnet == "" {
		subnet = defaultPodSubnet
	}
	p, err := netip.ParsePrefix(subnet)
	if err != nil || !p.Addr().Is4() {
		return kindConfigFacts{}, fmt.Errorf("kind config %s: podSubnet %q is not an IPv4 CIDR", path, subnet)
	}
	n := len(cfg.Nodes)
	if n == 0 {
		n = 1 // kind's default: one control plane
	}
	return kindConfigFacts{PodSubnet: p.Masked(), Nodes: n}, nil
}
