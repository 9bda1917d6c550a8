package cluster

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate"
)

func node(name, podCIDR, ip string) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{PodCIDR: podCIDR}}
	if ip != "" {
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: ip}}
	}
	return n
}

func TestNodeNetsOf(t *testing.T) {
	subnet := netip.MustParsePrefix("10.32.0.0/12")
	cp := node("pg-control-plane", "10.32.0.0/24", "172.29.0.2")
	w1 := node("pg-worker", "10.32.2.0/24", "172.29.0.4")
	w2 := node("pg-worker2", "10.32.1.0/24", "172.29.0.3")
	for _, tc := range []struct {
		name    string
		nodes   []corev1.Node
		waiting string // a substring of why it is not complete; "" when complete
		err     string // a substring of the error; "" for none
	}{
		{"complete", []corev1.Node{w2, cp, w1}, "", ""},
		{"one not registered", []corev1.Node{cp, w1}, "2 of 3 nodes", ""},
		{"no podCIDR yet", []corev1.Node{cp, w1, node("pg-worker2", "", "172.29.0.3")}, "pg-worker2 has no podCIDR", ""},
		{"no address yet", []corev1.Node{cp, w1, node("pg-worker2", "10.32.1.0/24", "")}, "pg-worker2 has no IPv4 InternalIP", ""},
		{"outside the subnet", []corev1.Node{cp, w1, node("pg-worker2", "10.244.1.0/24", "172.29.0.3")}, "", "not inside"},
		{"overlap", []corev1.Node{cp, w1, node("pg-worker2", "10.32.0.0/24", "172.29.0.3")}, "", "overlapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nets, waiting, err := nodeNetsOf(tc.nodes, subnet, 3)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.waiting != "" {
				if !strings.Contains(waiting, tc.waiting) || nets != nil {
					t.Fatalf("waiting %q (nets %v), want %q", waiting, nets, tc.waiting)
				}
				return
			}
			if waiting != "" || len(nets) != 3 {
				t.Fatalf("waiting %q, nets %v", waiting, nets)
			}
			if nets[2].Name != "pg-worker2" || nets[2].PodCIDR.String() != "10.32.1.0/24" || nets[2].InternalIP.String() != "172.29.0.3" {
				t.Errorf("nets %+v: want sorted by name, each with its own podCIDR and address", nets)
			}
		})
	}
}

func TestPodNetScript(t *testing.T) {
	subnet := netip.MustParsePrefix("10.32.0.0/12")
	nets := []nodeNet{
		{"pg-control-plane", netip.MustParsePrefix("10.32.0.0/24"), netip.MustParseAddr("172.29.0.2")},
		{"pg-worker", netip.MustParsePrefix("10.32.2.0/24"), netip.MustParseAddr("172.29.0.4")},
		{"pg-worker2", netip.MustParsePrefix("10.32.1.0/24"), netip.MustParseAddr("172.29.0.3")},
	}
	script, err := podNetScript(nets[1], nets, subnet)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(script), "\n")
	routes := slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return !strings.HasPrefix(l, "ip route ") })
	want := []string{"ip route replace 10.32.0.0/24 via 172.29.0.2", "ip route replace 10.32.1.0/24 via 172.29.0.3"}
	if !slices.Equal(routes, want) {
		t.Errorf("routes %q, want %q (every other node, none to itself)", routes, want)
	}
	for _, rule := range []string{
		"PROBEGATE-MASQ -d 10.32.0.0/12 -j RETURN",
		"PROBEGATE-MASQ -j MASQUERADE",
		"POSTROUTING -m addrtype ! --dst-type LOCAL -j PROBEGATE-MASQ",
	} {
		// Each rule is checked before it is added, so a second run adds nothing.
		if !strings.Contains(script, "iptables -w -t nat -C "+rule+" 2>/dev/null || iptables -w -t nat -A "+rule+"\n") {
			t.Errorf("script lacks the idempotent rule %q:\n%s", rule, script)
		}
	}
	if strings.Contains(script, "10.244.") {
		t.Errorf("script names kind's default pod subnet instead of the one given:\n%s", script)
	}
	// The CNI config comes last, by a rename of a file containerd does not load.
	last, prev := lines[len(lines)-1], lines[len(lines)-2]
	if last != "mv -f /etc/cni/net.d/.10-probegate.conflist.tmp "+cniConf {
		t.Errorf("last line %q, want the rename into place", last)
	}
	m := regexp.MustCompile(`^printf '%s\\n' '(.*)' >/etc/cni/net.d/\.10-probegate\.conflist\.tmp$`).FindStringSubmatch(prev)
	if m == nil {
		t.Fatalf("line before the rename %q, want the config written to the temporary file", prev)
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "printf") && i < slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "POSTROUTING") }) {
			t.Errorf("the CNI config is written before the masquerade")
		}
	}
	var conf struct {
		Plugins []struct {
			Type   string `json:"type"`
			IPMasq *bool  `json:"ipMasq"`
			IPAM   struct {
				Ranges [][]struct {
					Subnet string `json:"subnet"`
				} `json:"ranges"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(m[1]), &conf); err != nil {
		t.Fatalf("CNI config %s: %v", m[1], err)
	}
	if len(conf.Plugins) != 2 || conf.Plugins[0].Type != "bridge" || conf.Plugins[0].IPMasq == nil || *conf.Plugins[0].IPMasq ||
		len(conf.Plugins[0].IPAM.Ranges) != 1 || conf.Plugins[0].IPAM.Ranges[0][0].Subnet != "10.32.2.0/24" {
		t.Errorf("CNI config %s: want a bridge without its own masquerade handing out the node's 10.32.2.0/24", m[1])
	}
}

// TestKindConfig3NodeIsGenerated keeps the checked-in 3-node config equal to what
// `cluster create --workers 2` generates, and checks the generated config's shape.
func TestKindConfig3NodeIsGenerated(t *testing.T) {
	got, err := workerConfig(probegate.KindConfig, 2)
	if err != nil {
		t.Fatal(err)
	}
	root, err := FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, "kind-config-3node.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("kind-config-3node.yaml differs from the generated config:\n%s", got)
	}
	var cfg struct {
		Nodes []struct {
			Role              string            `yaml:"role"`
			ExtraPortMappings []any             `yaml:"extraPortMappings"`
			Labels            map[string]string `yaml:"labels"`
		} `yaml:"nodes"`
	}
	if err := yaml.Unmarshal(got, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Nodes) != 3 || cfg.Nodes[0].Role != "control-plane" || len(cfg.Nodes[0].ExtraPortMappings) != len(PortMappings) {
		t.Fatalf("nodes %+v: want the control plane with every port mapping first", cfg.Nodes)
	}
	for i, n := range cfg.Nodes[1:] {
		if n.Role != "worker" || len(n.ExtraPortMappings) != 0 {
			t.Errorf("node %+v: want a worker without port mappings", n)
		}
		if z := n.Labels["topology.kubernetes.io/zone"]; z != WorkerZone(i) || (i > 0 && z == WorkerZone(i-1)) {
			t.Errorf("worker %d in zone %q, want %q (each worker its own zone)", i, z, WorkerZone(i))
		}
	}
}

func TestOptionsWorkers(t *testing.T) {
	t.Setenv("PROBEGATE_CACHE", t.TempDir())
	root, err := FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PROBEGATE_ROOT", root)
	t.Setenv("PROBEGATE_WORKERS", "2")
	o := Options{}
	if err := o.defaults(); err != nil {
		t.Fatal(err)
	}
	facts, err := readKindConfig(o.Config)
	if err != nil || o.Workers != 2 || facts.Nodes != 3 || facts.PodSubnet.String() != "10.244.0.0/16" {
		t.Fatalf("PROBEGATE_WORKERS=2: workers %d, config %s: %+v, %v", o.Workers, o.Config, facts, err)
	}
	t.Setenv("PROBEGATE_WORKERS", "")
	o = Options{}
	if err := o.defaults(); err != nil {
		t.Fatal(err)
	}
	if facts, err := readKindConfig(o.Config); err != nil || facts.Nodes != 1 {
		t.Fatalf("default: %+v, %v, want one node", facts, err)
	}
	for _, tc := range []struct {
		env  string
		opts Options
		want string
	}{
		{"two", Options{}, "PROBEGATE_WORKERS"},
		{"", Options{Workers: -1}, "want 0 to"},
		{"", Options{Workers: MaxWorkers + 1}, "want 0 to"},
		{"", Options{Workers: 2, Config: "my.yaml"}, "list the workers in the config"},
	} {
		t.Setenv("PROBEGATE_WORKERS", tc.env)
		if err := tc.opts.defaults(); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("env %q, options %+v: %v, want one line with %q", tc.env, tc.opts, err, tc.want)
		}
	}
}

func TestHostsScript(t *testing.T) {
	peers := []nodeAddr{
		{"pg-control-plane", netip.MustParseAddr("172.29.0.2")},
		{"pg-worker", netip.MustParseAddr("172.29.0.3")},
		{"pg-worker2", netip.MustParseAddr("172.29.0.4")},
	}
	got := hostsScript("pg-worker", peers)
	want := "grep -q ' pg-control-plane$' /etc/hosts || echo '172.29.0.2 pg-control-plane' >>/etc/hosts\n" +
		"grep -q ' pg-worker2$' /etc/hosts || echo '172.29.0.4 pg-worker2' >>/etc/hosts\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
