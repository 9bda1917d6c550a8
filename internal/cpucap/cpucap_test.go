package cpucap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

const hybrid = `9:name=systemd:/kubelet.slice/pod1.slice/cri-containerd-abc.scope
4:memory:/kubelet.slice/pod1.slice/cri-containerd-abc.scope
1:cpu,cpuacct:/kubelet.slice/pod1.slice/cri-containerd-abc.scope
0::/kubelet.slice/pod1.slice/cri-containerd-abc.scope
`

const unified = "0::/kubelet.slice/pod1.slice/cri-containerd-abc.scope\n"

// node is a fake node: files by path, the commands it ran.
type node struct {
	files map[string]string
	ran   []string
}

func (n *node) exec(_ context.Context, _ string, args ...string) ([]byte, error) {
	n.ran = append(n.ran, strings.Join(args, " "))
	switch {
	case args[0] == "ctr":
		return []byte("TASK PID STATUS\nabc  4242 RUNNING\nother 7 RUNNING\n"), nil
	case args[0] == "cat":
		v, ok := n.files[args[1]]
		if !ok {
			return []byte("No such file"), errors.New("exit status 1")
		}
		return []byte(v), nil
	case args[0] == "sh":
		n.files[args[5]] = args[4] + "\n"
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected %v", args)
}

func TestCapAndRestore(t *testing.T) {
	const scope = "/kubelet.slice/pod1.slice/cri-containerd-abc.scope"
	for _, tc := range []struct {
		name, cgroup, file, before, capped string
	}{
		{"cgroup v1 (hybrid host)", hybrid, "/sys/fs/cgroup/cpu" + scope + "/cpu.cfs_quota_us", "-1", "5000"},
		{"cgroup v2", unified, "/sys/fs/cgroup" + scope + "/cpu.max", "max 100000", "5000 100000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &node{files: map[string]string{"/proc/4242/cgroup": tc.cgroup, tc.file: tc.before + "\n"}}
			restore, err := Cap(context.Background(), n.exec, Container{Node: "n1", ID: "abc"}, 50)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(n.files[tc.file]); got != tc.capped {
				t.Fatalf("capped at 50m: %s = %q, want %q (ran %q)", tc.file, got, tc.capped, n.ran)
			}
			if err := restore(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(n.files[tc.file]); got != tc.before {
				t.Fatalf("restored: %s = %q, want %q", tc.file, got, tc.before)
			}
		})
	}
}

func TestCapFloorsAtTheKernelMinimum(t *testing.T) {
	n := &node{files: map[string]string{"/proc/4242/cgroup": unified, "/sys/fs/cgroup/kubelet.slice/pod1.slice/cri-containerd-abc.scope/cpu.max": "max 100000"}}
	if _, err := Cap(context.Background(), n.exec, Container{Node: "n1", ID: "abc"}, 1); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(n.files["/sys/fs/cgroup/kubelet.slice/pod1.slice/cri-containerd-abc.scope/cpu.max"]); got != "1000 100000" {
		t.Fatalf("1m capped as %q, want the 10m floor 1000 100000", got)
	}
}

func TestUsage(t *testing.T) {
	const scope = "/kubelet.slice/pod1.slice/cri-containerd-abc.scope"
	v1 := &node{files: map[string]string{"/proc/4242/cgroup": hybrid, "/sys/fs/cgroup/cpuacct" + scope + "/cpuacct.usage": "2500000000\n"}}
	if d, err := Usage(context.Background(), v1.exec, Container{Node: "n1", ID: "abc"}); err != nil || d != 2500*time.Millisecond {
		t.Errorf("v1 usage = %v, %v; want 2.5s", d, err)
	}
	v2 := &node{files: map[string]string{"/proc/4242/cgroup": unified, "/sys/fs/cgroup" + scope + "/cpu.stat": "usage_usec 1500000\nuser_usec 1\n"}}
	if d, err := Usage(context.Background(), v2.exec, Container{Node: "n1", ID: "abc"}); err != nil || d != 1500*time.Millisecond {
		t.Errorf("v2 usage = %v, %v; want 1.5s", d, err)
	}
	if _, err := Usage(context.Background(), v2.exec, Container{Node: "n1", ID: "gone"}); err == nil || !strings.Contains(err.Error(), "no containerd task gone") {
		t.Errorf("a container with no task: %v", err)
	}
}
