package faults

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	corev1 "k8s.io/api/core/v1"
)

// TypeFreeze stops a container's process.
const TypeFreeze = "freeze"

func init() {
	Register(Definition{
		Type: TypeFreeze,
		Doc:  "stops one pod's container process with SIGSTOP on the node (SIGCONT on revert), like a hung runtime",
		Params: []Param{
			podParam,
			{Name: "container", Kind: KindString, Doc: "container to freeze (default the first)"},
		},
		Needs:    []Capability{NeedsNodeExec},
		Proof:    "the process state in /proc/<pid>/status (T: stopped)",
		Explains: []timeline.RestartCause{timeline.CauseLiveness},
		Build: func(a Args) (Fault, error) {
			ctr := a.Env.Container
			if v, ok := a.Param("container"); ok {
				ctr = v
			}
			return NewFreeze(a.Rec, a.Pods, ctr, a.Env.NodeExec), nil
		},
	})
}

// Freeze stops a container's process without its cooperation: SIGSTOP to its PID on the pod's node
// (found with `ctr -n k8s.io task ls` by the container's ID), SIGCONT on revert. The process keeps its
// sockets but answers nothing, like a hung runtime; probes time out. Proof of effect: the process
// state in /proc/<pid>/status ("T (stopped)").
type Freeze struct {
	Recorder
	state
	Choice    PodChoice
	Container string // the container to freeze; the pod's first when empty
	Exec      NodeExec

	pod, node, container, id, pid string
}

// signalTimeout bounds sending SIGSTOP or SIGCONT through the node.
const signalTimeout = 10 * time.Second

// NewFreeze returns the freeze fault.
func NewFreeze(rec Recorder, choice PodChoice, container string, exec NodeExec) *Freeze {
	rec.Type = TypeFreeze
	return &Freeze{Recorder: rec, Choice: choice, Container: container, Exec: exec}
}

// Type implements Fault.
func (f *Freeze) Type() string { return TypeFreeze }

// SetLoad gives the pod choice the running load (for "busiest").
func (f *Freeze) SetLoad(l RateSetter) { f.Choice.SetLoad(l) }

// Inject finds the container's process on the node and stops it.
func (f *Freeze) Inject(ctx context.Context) error {
	if !f.begin(true) {
		f.end(true)
		return nil
	}
	pod, err := f.Choice.Choose(ctx)
	if err != nil {
		f.end(false)
		return fmt.Errorf("freeze: %w", err)
	}
	name, id, err := containerID(pod, f.Container)
	if err != nil {
		f.end(false)
		return fmt.Errorf("freeze: %w", err)
	}
	node := pod.Spec.NodeName
	if node == "" {
		f.end(false)
		return fmt.Errorf("freeze: pod %s is not on a node", pod.Name)
	}
	out, err := f.Exec(ctx, node, "ctr", "-n", "k8s.io", "task", "ls")
	if err != nil {
		f.end(false)
		return fmt.Errorf("freeze: list containerd tasks on node %s: %w: %s", node, err, out)
	}
	pid, err := taskPID(out, id)
	if err != nil {
		f.end(false)
		return fmt.Errorf("freeze pod %s container %s: %w", pod.Name, name, err)
	}
	// The STOP gets its own bounded context: an interrupt must not cut it between the node's kill
	// and the record of it here, or the revert would not know there is a process to resume.
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
	out, err = f.Exec(stopCtx, node, "kill", "-STOP", pid)
	cancel()
	if err != nil {
		// The STOP may have landed all the same: resume the process (harmless if it runs).
		contCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
		f.Exec(contCtx, node, "kill", "-CONT", pid)
		cancel()
		f.end(false)
		return fmt.Errorf("freeze pod %s: kill -STOP %s on node %s: %w: %s", pod.Name, pid, node, err, out)
	}
	f.pod, f.node, f.container, f.id, f.pid = pod.Name, node, name, id, pid
	f.record(timeline.FaultInject, pod.Name, pod.Name, fmt.Sprintf("SIGSTOP to container %s (pid %s on node %s)", name, pid, node),
		map[string]string{"pid": pid, "container": name, "node": node})
	f.end(true)
	f.observe(ctx, true)
	return nil
}

// Revert resumes the process. If it is gone (kubelet killed and restarted the container, or the pod
// was deleted), there is nothing left to resume and that is recorded.
func (f *Freeze) Revert(ctx context.Context) error {
	if !f.begin(false) {
		f.end(false)
		return nil
	}
	params := map[string]string{"pid": f.pid, "container": f.container}
	if out, err := f.Exec(ctx, f.node, "kill", "-CONT", f.pid); err != nil {
		gone, lerr := f.processGone(ctx)
		if lerr != nil || !gone {
			f.end(true)
			return fmt.Errorf("freeze pod %s: kill -CONT %s on node %s: %w: %s", f.pod, f.pid, f.node, errors.Join(err, lerr), out)
		}
		f.record(timeline.FaultRevert, f.pod, f.pod, fmt.Sprintf("pid %s is gone (the container was restarted or deleted): nothing to resume", f.pid), params)
		f.end(false)
		return nil
	}
	f.record(timeline.FaultRevert, f.pod, f.pod, fmt.Sprintf("SIGCONT to container %s (pid %s)", f.container, f.pid), params)
	f.end(false)
	f.observe(ctx, false)
	return nil
}

func (f *Freeze) observe(ctx context.Context, active bool) {
	params := map[string]string{"pid": f.pid}
	out, err := f.Exec(ctx, f.node, "cat", "/proc/"+f.pid+"/status")
	if err != nil {
		params["error"] = err.Error()
		f.proof(f.pod, f.pod, phase(active), false, fmt.Sprintf("read /proc/%s/status: %v", f.pid, err), params)
		return
	}
	st := procState(out)
	params["state"] = st
	stopped := strings.HasPrefix(st, "T") || strings.HasPrefix(st, "t")
	f.proof(f.pod, f.pod, phase(active), stopped == active, fmt.Sprintf("process %s state: %s", f.pid, st), params)
}

// processGone reports whether the frozen process is no longer the container's task: the containerd
// task of the container is gone or runs another PID (kubelet killed and restarted it, or the pod was
// deleted). It asks the runtime rather than reading kill's error message.
func (f *Freeze) processGone(ctx context.Context) (bool, error) {
	out, err := f.Exec(ctx, f.node, "ctr", "-n", "k8s.io", "task", "ls")
	if err != nil {
		return false, fmt.Errorf("list containerd tasks on node %s: %w: %s", f.node, err, out)
	}
	pid, err := taskPID(out, f.id)
	return err != nil || pid != f.pid, nil
}

// containerID returns the name and runtime ID (without the "containerd://" scheme) of the named
// container of pod, or of its first container.
func containerID(pod *corev1.Pod, name string) (string, string, error) {
	if name == "" && len(pod.Spec.Containers) > 0 {
		name = pod.Spec.Containers[0].Name
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != name {
			continue
		}
		if cs.ContainerID == "" || cs.State.Running == nil {
			return "", "", fmt.Errorf("container %s of pod %s is not running", name, pod.Name)
		}
		id := cs.ContainerID
		if i := strings.Index(id, "://"); i >= 0 {
			id = id[i+3:]
		}
		return name, id, nil
	}
	return "", "", fmt.Errorf("pod %s has no container %q", pod.Name, name)
}

// taskPID finds id's PID in `ctr task ls` output (columns TASK, PID, STATUS).
func taskPID(out []byte, id string) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == id {
			if fields[1] == "0" {
				return "", fmt.Errorf("task %s has no process", id)
			}
			return fields[1], nil
		}
	}
	return "", fmt.Errorf("no containerd task %s on the node", id)
}

// procState returns the State field of /proc/<pid>/status ("T (stopped)").
func procState(status []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "State:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
