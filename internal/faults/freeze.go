package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
		Doc:  "stops every process of one pod's container with SIGSTOP on the node (SIGCONT on revert), like a hung runtime; an entrypoint wrapper's app (sh -c, tini, a supervisor) too",
		Params: []Param{
			podParam,
			{Name: "container", Kind: KindString, Doc: "container to freeze (default the first)"},
		},
		Needs:    []Capability{NeedsNodeAccess},
		Proof:    "the state of every process of the container in /proc/<pid>/status (T: stopped), listed again after the stop; after the thaw, none stopped",
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

// Freeze stops a container's processes without their cooperation: SIGSTOP to every process of the
// container on the pod's node (found by the container's ID, through the kind node container or
// probegate's node agent: Procs), the main one first, and SIGCONT to each on revert. Every process,
// not only the main one: an entrypoint wrapper (sh -c, tini, a supervisor) forks the app, which a
// stop of the main pid alone leaves serving. The processes keep their sockets but answer nothing,
// like a hung runtime; probes time out. Proof of effect: every process of the container is in state
// "T (stopped)" (/proc/<pid>/status), and after the thaw none is.
type Freeze struct {
	Recorder
	state
	Choice    PodChoice
	Container string // the container to freeze; the pod's first when empty
	Procs     NodeProcs

	pod, node, container, id string
	pid                      int   // the container's main process
	pids                     []int // every process stopped, the main one first
}

// signalTimeout bounds sending SIGSTOP or SIGCONT through the node.
const signalTimeout = 10 * time.Second

// stopRounds bounds how often the freeze lists the container's processes again to stop one forked
// while it stopped the others.
const stopRounds = 5

// NewFreeze returns the freeze fault.
func NewFreeze(rec Recorder, choice PodChoice, container string, procs NodeProcs) *Freeze {
	rec.Type = TypeFreeze
	return &Freeze{Recorder: rec, Choice: choice, Container: container, Procs: procs}
}

// Type implements Fault.
func (f *Freeze) Type() string { return TypeFreeze }

// SetLoad gives the pod choice the running load (for "busiest").
func (f *Freeze) SetLoad(l RateSetter) { f.Choice.SetLoad(l) }

// Inject finds the container's processes on the node and stops them all.
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
	// The STOPs get their own bounded context: an interrupt must not cut them between the node's
	// kill and the record of it here, or the revert would not know there are processes to resume.
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
	stopped, at, err := f.stopAll(stopCtx, node, id, pid)
	cancel()
	if err != nil {
		// A STOP may have landed all the same: resume them (harmless if they run).
		contCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
		for _, p := range stopped {
			_ = f.Procs.Signal(contCtx, node, p, "CONT")
		}
		cancel()
		f.end(false)
		return fmt.Errorf("freeze pod %s container %s on node %s: %w", pod.Name, name, node, err)
	}
	f.pod, f.node, f.container, f.id, f.pid, f.pids = pod.Name, node, name, id, pid, stopped
	via := f.Procs.Via(node)
	f.recordAt(at, timeline.FaultInject, pod.Name, pod.Name, fmt.Sprintf("SIGSTOP to every process of container %s (pids %s on node %s, the main one %d; through %s)", name, pidList(stopped, " "), node, pid, via),
		map[string]string{"pid": strconv.Itoa(pid), "pids": pidList(stopped, ","), "container": name, "node": node, "via": via})
	f.end(true)
	f.observe(ctx, true)
	return nil
}

// stopAll sends SIGSTOP to main, then to every other process of container id, listing them again
// until a listing holds none it has not stopped (a process forked meanwhile). It returns the pids
// it stopped (a process that exited before its signal is left out) and when the last SIGSTOP
// returned: the freeze is in force from then, the listing after it only confirms that (on a busy
// 2-core host each exec into the node took up to ~0.7 s, and stamping after the listing made a
// freeze "2s late" in CI).
func (f *Freeze) stopAll(ctx context.Context, node, id string, main int) ([]int, time.Time, error) {
	if err := f.Procs.Signal(ctx, node, main, "STOP"); err != nil {
		return []int{main}, time.Time{}, fmt.Errorf("SIGSTOP to pid %d: %w", main, err)
	}
	stopped, at := []int{main}, time.Now()
	for round := 0; round < stopRounds; round++ {
		pids, err := f.Procs.ContainerPIDs(ctx, node, id)
		if err != nil {
			return stopped, at, fmt.Errorf("list the container's processes: %w", err)
		}
		slices.Sort(pids)
		fresh := 0
		for _, p := range pids {
			if slices.Contains(stopped, p) {
				continue
			}
			fresh++
			if err := f.Procs.Signal(ctx, node, p, "STOP"); err != nil {
				if _, serr := f.Procs.State(ctx, node, p); gone(serr) {
					continue // it exited meanwhile
				}
				return stopped, at, fmt.Errorf("SIGSTOP to pid %d: %w", p, err)
			}
			stopped, at = append(stopped, p), time.Now()
		}
		if fresh == 0 {
			return stopped, at, nil
		}
	}
	return stopped, at, fmt.Errorf("the container kept starting processes through %d listings", stopRounds)
}

// Revert resumes the processes, the main one last. If the main one is gone (kubelet killed and
// restarted the container, or the pod was deleted), there is nothing left to resume and that is
// recorded.
func (f *Freeze) Revert(ctx context.Context) error {
	if !f.begin(false) {
		f.end(false)
		return nil
	}
	pid := strconv.Itoa(f.pid)
	params := map[string]string{"pid": pid, "pids": pidList(f.pids, ","), "container": f.container, "via": f.Procs.Via(f.node)}
	goneRecord := func() {
		f.record(timeline.FaultRevert, f.pod, f.pod, fmt.Sprintf("pid %s is gone (the container was restarted or deleted): nothing to resume", pid), params)
		f.end(false)
	}
	// A container kubelet restarted took every process with it, and their pids may be reused: ask
	// before resuming the others.
	if g, err := f.processGone(ctx); err == nil && g {
		goneRecord()
		return nil
	}
	var failed []error
	for i := len(f.pids) - 1; i > 0; i-- {
		p := f.pids[i]
		if err := f.Procs.Signal(ctx, f.node, p, "CONT"); err != nil {
			if _, serr := f.Procs.State(ctx, f.node, p); !gone(serr) {
				failed = append(failed, fmt.Errorf("SIGCONT to pid %d: %w", p, err))
			}
		}
	}
	if err := f.Procs.Signal(ctx, f.node, f.pid, "CONT"); err != nil {
		gone, lerr := f.processGone(ctx)
		if lerr != nil || !gone {
			f.end(true)
			return fmt.Errorf("freeze pod %s: SIGCONT to pid %d on node %s: %w", f.pod, f.pid, f.node, errors.Join(err, lerr))
		}
		goneRecord()
		return nil
	}
	if len(failed) > 0 {
		f.end(true)
		return fmt.Errorf("freeze pod %s: resume on node %s: %w", f.pod, f.node, errors.Join(failed...))
	}
	f.record(timeline.FaultRevert, f.pod, f.pod, fmt.Sprintf("SIGCONT to every process of container %s (pids %s)", f.container, pidList(f.pids, " ")), params)
	f.end(false)
	f.observe(ctx, false)
	return nil
}

// observe records the proof: while frozen, every process of the container is stopped; after the
// thaw, none is. The processes are listed again (one forked since, or a wrapper's child that was
// missed, counts); a process that exited meanwhile is left out.
func (f *Freeze) observe(ctx context.Context, active bool) {
	params := map[string]string{"pid": strconv.Itoa(f.pid)}
	pids, err := f.Procs.ContainerPIDs(ctx, f.node, f.id)
	if err != nil {
		params["error"] = err.Error()
		f.proof(f.pod, f.pod, phase(active), false, fmt.Sprintf("list the processes of container %s: %v", f.container, err), params)
		return
	}
	slices.Sort(pids)
	if i := slices.Index(pids, f.pid); i > 0 { // the main one first
		pids = append([]int{f.pid}, slices.Delete(pids, i, i+1)...)
	}
	var states, wrong []string
	for _, p := range pids {
		st, err := f.Procs.State(ctx, f.node, p)
		switch {
		case gone(err):
			continue
		case err != nil:
			params["error"] = err.Error()
			f.proof(f.pod, f.pod, phase(active), false, fmt.Sprintf("read /proc/%d/status: %v", p, err), params)
			return
		}
		if p == f.pid {
			params["state"] = st
		}
		states = append(states, fmt.Sprintf("%d=%s", p, st))
		if nodeagent.Stopped(st) != active {
			wrong = append(wrong, fmt.Sprintf("%d %s", p, st))
		}
	}
	params["states"] = strings.Join(states, ",")
	ok := len(states) > 0 && len(wrong) == 0
	detail := fmt.Sprintf("every process of container %s (%d) stopped: %s", f.container, len(states), strings.Join(states, ", "))
	switch {
	case len(states) == 0:
		detail = fmt.Sprintf("container %s has no process left to read", f.container)
	case !active && ok:
		detail = fmt.Sprintf("every process of container %s (%d) running: %s", f.container, len(states), strings.Join(states, ", "))
	case active && !ok:
		detail = fmt.Sprintf("%d of %d processes of container %s not stopped: %s", len(wrong), len(states), f.container, strings.Join(wrong, ", "))
	case !active:
		detail = fmt.Sprintf("%d of %d processes of container %s still stopped: %s", len(wrong), len(states), f.container, strings.Join(wrong, ", "))
	}
	f.proof(f.pod, f.pod, phase(active), ok, detail, params)
}

// pidList joins pids with sep.
func pidList(pids []int, sep string) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, sep)
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
