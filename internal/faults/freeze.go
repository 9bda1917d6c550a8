package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/nodeagent"
	"github.com/probegate/probegate/internal/timeline"
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
		Needs:    []Capability{NeedsNodeAccess},
		Proof:    "the process state in /proc/<pid>/status (T: stopped)",
		Explains: []timeline.RestartCause{timeline.CauseLiveness},
		Build: func(a Args) (Fault, error) {
			ctr := a.Env.Container
			if v, ok := a.Param("container"); ok {
				ctr = v
			}
			return NewFreeze(a.Rec, a.Pods, ctr, a.Env.NodeProcs), nil
		},
	})
}

// Freeze stops a container's process without its cooperation: SIGSTOP to its PID on the pod's node
// (found by the container's ID, through the kind node container or probegate's node agent: Procs),
// SIGCONT on revert. The process keeps its sockets but answers nothing, like a hung runtime; probes
// time out. Proof of effect: the process state in /proc/<pid>/status ("T (stopped)").
type Freeze struct {
	Recorder
	state
	Choice    PodChoice
	Container string // the container to freeze; the pod's first when empty
	Procs     NodeProcs

	pod, node, container, id string
	pid                      int
}

// signalTimeout bounds sending SIGSTOP or SIGCONT through the node.
const signalTimeout = 10 * time.Second

// NewFreeze returns the freeze fault.
func NewFreeze(rec Recorder, choice PodChoice, container string, procs NodeProcs) *Freeze {
	rec.Type = TypeFreeze
	return &Freeze{Recorder: rec, Choice: choice, Container: container, Procs: procs}
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
	pid, err := f.Procs.ContainerPID(ctx, node, id)
	if err != nil {
		f.end(false)
		return fmt.Errorf("freeze pod %s container %s: find its process on node %s: %w", pod.Name, name, node, err)
	}
	// The STOP gets its own bounded context: an interrupt must not cut it between the node's kill
	// and the record of it here, or the revert would not know there is a process to resume.
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
	err = f.Procs.Signal(stopCtx, node, pid, "STOP")
	cancel()
	if err != nil {
		// The STOP may have landed all the same: resume the process (harmless if it runs).
		contCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
		_ = f.Procs.Signal(contCtx, node, pid, "CONT")
		cancel()
		f.end(false)
		return fmt.Errorf("freeze pod %s: SIGSTOP to pid %d on node %s: %w", pod.Name, pid, node, err)
	}
	f.pod, f.node, f.container, f.id, f.pid = pod.Name, node, name, id, pid
	via := f.Procs.Via(node)
	f.record(timeline.FaultInject, pod.Name, pod.Name, fmt.Sprintf("SIGSTOP to container %s (pid %d on node %s, through %s)", name, pid, node, via),
		map[string]string{"pid": strconv.Itoa(pid), "container": name, "node": node, "via": via})
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
	pid := strconv.Itoa(f.pid)
	params := map[string]string{"pid": pid, "container": f.container, "via": f.Procs.Via(f.node)}
	if err := f.Procs.Signal(ctx, f.node, f.pid, "CONT"); err != nil {
		gone, lerr := f.processGone(ctx)
		if lerr != nil || !gone {
			f.end(true)
			return fmt.Errorf("freeze pod %s: SIGCONT to pid %d on node %s: %w", f.pod, f.pid, f.node, errors.Join(err, lerr))
		}
		f.record(timeline.FaultRevert, f.pod, f.pod, fmt.Sprintf("pid %s is gone (the container was restarted or deleted): nothing to resume", pid), params)
		f.end(false)
		return nil
	}
	f.record(timeline.FaultRevert, f.pod, f.pod, fmt.Sprintf("SIGCONT to container %s (pid %s)", f.container, pid), params)
	f.end(false)
	f.observe(ctx, false)
	return nil
}

func (f *Freeze) observe(ctx context.Context, active bool) {
	params := map[string]string{"pid": strconv.Itoa(f.pid)}
	st, err := f.Procs.State(ctx, f.node, f.pid)
	if err != nil {
		params["error"] = err.Error()
		f.proof(f.pod, f.pod, phase(active), false, fmt.Sprintf("read /proc/%d/status: %v", f.pid, err), params)
		return
	}
	params["state"] = st
	f.proof(f.pod, f.pod, phase(active), nodeagent.Stopped(st) == active, fmt.Sprintf("process %d state: %s", f.pid, st), params)
}

// processGone reports whether the frozen process is no longer the container's main process: the
// container runs no process or another PID (kubelet killed and restarted it, or the pod was
// deleted). It asks the node rather than reading the signal's error.
func (f *Freeze) processGone(ctx context.Context) (bool, error) {
	pid, err := f.Procs.ContainerPID(ctx, f.node, f.id)
	if gone(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return pid != f.pid, nil
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
