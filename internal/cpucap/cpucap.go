// Package cpucap caps the CPU of running containers below the API server, through the CFS quota of
// each container's cgroup on its node (cgroup v2 cpu.max, v1 cpu.cfs_quota_us), and reads the CPU
// they used. No restart, no resize subresource, no QoS class to respect: the overload's capacity
// search uses it to bring a target the harness cannot out-send within the harness's reach.
package cpucap

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Exec runs a command in a node's container (the kind node) and returns its combined output.
type Exec func(ctx context.Context, node string, args ...string) ([]byte, error)

// Period is the CFS period a cap is written with.
const Period = 100 * time.Millisecond

// MinMillicores is the lowest cap written: the kernel refuses a quota under 1 ms per period.
const MinMillicores = 10

// Container is one running container: its node and its containerd task (the runtime ID without
// its scheme).
type Container struct {
	Node, ID string
}

// group is a container's CPU cgroup: its path in the hierarchy and whether that is cgroup v2.
type group struct {
	v2   bool
	path string
}

func (g group) quotaFile() string {
	if g.v2 {
		return "/sys/fs/cgroup" + g.path + "/cpu.max"
	}
	return "/sys/fs/cgroup/cpu" + g.path + "/cpu.cfs_quota_us"
}

func (g group) usageFile() string {
	if g.v2 {
		return "/sys/fs/cgroup" + g.path + "/cpu.stat"
	}
	return "/sys/fs/cgroup/cpuacct" + g.path + "/cpuacct.usage"
}

// locate finds c's cgroup from its main process's /proc/<pid>/cgroup on its node.
func locate(ctx context.Context, exec Exec, c Container) (group, error) {
	out, err := exec(ctx, c.Node, "ctr", "-n", "k8s.io", "task", "ls")
	if err != nil {
		return group{}, fmt.Errorf("list containerd tasks on node %s: %w: %s", c.Node, err, out)
	}
	pid, err := taskPID(out, c.ID)
	if err != nil {
		return group{}, err
	}
	out, err = exec(ctx, c.Node, "cat", fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return group{}, fmt.Errorf("read the cgroup of pid %d on node %s: %w: %s", pid, c.Node, err, out)
	}
	return parseCgroup(string(out))
}

// parseCgroup reads /proc/<pid>/cgroup: the v1 cpu controller's line when there is one (a hybrid
// host's controllers are v1), else the unified hierarchy's.
func parseCgroup(s string) (group, error) {
	var unified string
	for line := range strings.Lines(s) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
			continue
		}
		for ctl := range strings.SplitSeq(parts[1], ",") {
			if ctl == "cpu" {
				return group{path: parts[2]}, nil
			}
		}
	}
	if unified == "" {
		return group{}, fmt.Errorf("no cpu cgroup in %q", strings.TrimSpace(s))
	}
	return group{v2: true, path: unified}, nil
}

// Usage is the CPU time c has used so far.
func Usage(ctx context.Context, exec Exec, c Container) (time.Duration, error) {
	g, err := locate(ctx, exec, c)
	if err != nil {
		return 0, err
	}
	file := g.usageFile()
	out, err := exec(ctx, c.Node, "cat", file)
	if err != nil {
		return 0, fmt.Errorf("read %s on node %s: %w: %s", file, c.Node, err, out)
	}
	return parseUsage(string(out), g)
}

func parseUsage(s string, g group) (time.Duration, error) {
	if !g.v2 {
		ns, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu usage %q: %w", strings.TrimSpace(s), err)
		}
		return time.Duration(ns), nil
	}
	for line := range strings.Lines(s) {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			us, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("cpu.stat %q: %w", strings.TrimSpace(line), err)
			}
			return time.Duration(us) * time.Microsecond, nil
		}
	}
	return 0, fmt.Errorf("no usage_usec in cpu.stat %q", strings.TrimSpace(s))
}

// Cap limits c to millicores of CPU (at least MinMillicores) and returns what puts the previous
// quota back.
func Cap(ctx context.Context, exec Exec, c Container, millicores int64) (restore func(context.Context) error, err error) {
	g, err := locate(ctx, exec, c)
	if err != nil {
		return nil, err
	}
	file := g.quotaFile()
	out, err := exec(ctx, c.Node, "cat", file)
	if err != nil {
		return nil, fmt.Errorf("read %s on node %s: %w: %s", file, c.Node, err, out)
	}
	previous := strings.TrimSpace(string(out))
	if err := write(ctx, exec, c.Node, file, quotaValue(g.v2, max(millicores, MinMillicores))); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return write(ctx, exec, c.Node, file, previous) }, nil
}

// quotaValue is what the quota file takes for millicores: v2 "QUOTA PERIOD", v1 the quota in µs.
func quotaValue(v2 bool, millicores int64) string {
	quota := millicores * Period.Microseconds() / 1000
	if v2 {
		return fmt.Sprintf("%d %d", quota, Period.Microseconds())
	}
	return strconv.FormatInt(quota, 10)
}

func write(ctx context.Context, exec Exec, node, file, value string) error {
	// The value travels as an argument, never through the shell's parser.
	out, err := exec(ctx, node, "sh", "-c", `printf '%s\n' "$1" > "$2"`, "cpucap", value, file)
	if err != nil {
		return fmt.Errorf("write %q to %s on node %s: %w: %s", value, file, node, err, out)
	}
	return nil
}

// taskPID reads `ctr task ls` (columns TASK, PID, STATUS) for id's pid.
func taskPID(out []byte, id string) (int, error) {
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != id {
			continue
		}
		pid, err := strconv.Atoi(f[1])
		if err != nil || pid <= 0 {
			return 0, fmt.Errorf("containerd task %s: no running process (pid %q)", id, f[1])
		}
		return pid, nil
	}
	return 0, fmt.Errorf("no containerd task %s", id)
}
