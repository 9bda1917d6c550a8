package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/probegate/probegate/internal/nodeagent"
)

// NodeProcs reaches the processes on the cluster's nodes, for faults that act below the API server
// (freeze). Either through the kind node container (ExecProcs) or through probegate's node agent on
// each node (AgentProcs). Not-there answers wrap nodeagent.ErrGone.
type NodeProcs interface {
	// ContainerPID returns the pid of the main process of the container with runtime ID id (no
	// scheme) on node.
	ContainerPID(ctx context.Context, node, id string) (int, error)
	// ContainerPIDs returns the pid of every process of that container on node (an entrypoint
	// wrapper's app too), in no particular order.
	ContainerPIDs(ctx context.Context, node, id string) ([]int, error)
	// Signal sends sig ("STOP" or "CONT") to pid on node.
	Signal(ctx context.Context, node string, pid int, sig string) error
	// State returns pid's state on node, as /proc/<pid>/status gives it ("T (stopped)").
	State(ctx context.Context, node string, pid int) (string, error)
	// Via says how node is reached, for the timeline ("docker exec probegate-worker").
	Via(node string) string
}

// ExecProcs reaches the nodes by running commands in their kind node containers: the container's
// task in containerd (`ctr task ls`) and its processes (`ctr task ps`: every pid in the container's
// cgroup), kill, and cat of /proc/<pid>/status.
func ExecProcs(exec NodeExec) NodeProcs { return execProcs{exec} }

type execProcs struct{ exec NodeExec }

func (e execProcs) ContainerPID(ctx context.Context, node, id string) (int, error) {
	out, err := e.exec(ctx, node, "ctr", "-n", "k8s.io", "task", "ls")
	if err != nil {
		return 0, fmt.Errorf("list containerd tasks on node %s: %w: %s", node, err, out)
	}
	return taskPID(out, id)
}

func (e execProcs) ContainerPIDs(ctx context.Context, node, id string) ([]int, error) {
	out, err := e.exec(ctx, node, "ctr", "-n", "k8s.io", "task", "ps", id)
	if err != nil {
		if strings.Contains(string(out)+err.Error(), "not found") {
			return nil, fmt.Errorf("%w: no containerd task %s on node %s: %s", nodeagent.ErrGone, id, node, strings.TrimSpace(string(out)))
		}
		return nil, fmt.Errorf("list the processes of containerd task %s on node %s: %w: %s", id, node, err, out)
	}
	return taskPIDs(out, id)
}

// taskPIDs reads `ctr task ps` output (columns PID, INFO); nodeagent.ErrGone when it lists none.
func taskPIDs(out []byte, id string) ([]int, error) {
	var pids []int
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] == "PID" {
			continue
		}
		pid, err := strconv.Atoi(fields[0])
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("task %s: processes: pid %q in %q", id, fields[0], strings.TrimSpace(line))
		}
		pids = append(pids, pid)
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("%w: task %s has no process", nodeagent.ErrGone, id)
	}
	return pids, nil
}

func (e execProcs) Signal(ctx context.Context, node string, pid int, sig string) error {
	if _, err := nodeagent.ParseSignal(sig); err != nil {
		return err
	}
	if out, err := e.exec(ctx, node, "kill", "-"+sig, strconv.Itoa(pid)); err != nil {
		return fmt.Errorf("kill -%s %d on node %s: %w: %s", sig, pid, node, err, out)
	}
	return nil
}

func (e execProcs) State(ctx context.Context, node string, pid int) (string, error) {
	out, err := e.exec(ctx, node, "cat", "/proc/"+strconv.Itoa(pid)+"/status")
	if err != nil {
		if strings.Contains(string(out)+err.Error(), "No such file") {
			return "", fmt.Errorf("%w: read /proc/%d/status on node %s: %v", nodeagent.ErrGone, pid, node, err)
		}
		return "", fmt.Errorf("read /proc/%d/status on node %s: %w", pid, node, err)
	}
	return nodeagent.StatusState(out), nil
}

func (execProcs) Via(node string) string { return "docker exec " + node }

// taskPID finds id's PID in `ctr task ls` output (columns TASK, PID, STATUS); nodeagent.ErrGone
// when the container has no task or no process.
func taskPID(out []byte, id string) (int, error) {
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != id {
			continue
		}
		pid, err := strconv.Atoi(fields[1])
		switch {
		case err != nil:
			return 0, fmt.Errorf("task %s: pid %q: %w", id, fields[1], err)
		case pid == 0:
			return 0, fmt.Errorf("%w: task %s has no process", nodeagent.ErrGone, id)
		}
		return pid, nil
	}
	return 0, fmt.Errorf("%w: no containerd task %s", nodeagent.ErrGone, id)
}

// NodeAgent is probegate's node agent on one node: its pod and a client of its API.
type NodeAgent struct {
	Pod    string
	Client nodeagent.Client
}

// AgentProcs reaches the nodes through the node agent on each, by node name.
type AgentProcs map[string]NodeAgent

func (a AgentProcs) agent(node string) (NodeAgent, error) {
	na, ok := a[node]
	if !ok {
		return NodeAgent{}, fmt.Errorf("no node agent runs on node %s", node)
	}
	return na, nil
}

func (a AgentProcs) ContainerPID(ctx context.Context, node, id string) (int, error) {
	na, err := a.agent(node)
	if err != nil {
		return 0, err
	}
	return na.Client.ContainerPID(ctx, id)
}

func (a AgentProcs) ContainerPIDs(ctx context.Context, node, id string) ([]int, error) {
	na, err := a.agent(node)
	if err != nil {
		return nil, err
	}
	return na.Client.ContainerPIDs(ctx, id)
}

func (a AgentProcs) Signal(ctx context.Context, node string, pid int, sig string) error {
	na, err := a.agent(node)
	if err != nil {
		return err
	}
	return na.Client.Signal(ctx, pid, sig)
}

func (a AgentProcs) State(ctx context.Context, node string, pid int) (string, error) {
	na, err := a.agent(node)
	if err != nil {
		return "", err
	}
	return na.Client.State(ctx, pid)
}

func (a AgentProcs) Via(node string) string {
	if na, ok := a[node]; ok {
		return "node agent " + na.Pod
	}
	return "node agent (none on " + node + ")"
}

// StopKubelet stops (SIGSTOP) or resumes (SIGCONT) node's kubelet through its node agent: the
// control plane loses the node (no Lease renewals, no status) while its pods keep running. It is
// node-loss's way to stop a node that is not a container on this machine (Env.PauseNode).
func (a AgentProcs) StopKubelet(ctx context.Context, node string, stop bool) error {
	na, err := a.agent(node)
	if err != nil {
		return err
	}
	sig := "CONT"
	if stop {
		sig = "STOP"
	}
	if _, err := na.Client.SignalHost(ctx, "kubelet", sig); err != nil {
		return fmt.Errorf("SIG%s to kubelet on node %s through node agent %s: %w", sig, node, na.Pod, err)
	}
	return nil
}

// gone reports whether err says the process or container is not on the node.
func gone(err error) bool { return errors.Is(err, nodeagent.ErrGone) }
