package faults

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/pause"
	"github.com/probegate/probegate/internal/timeline"
)

// ColdStartMarker is the env var a stopped-start cold start sets on the new template: the app
// ignores it; changing it is what rolls the workload.
const ColdStartMarker = "PROBEGATE_COLD_START"

// stoppedStart makes any app's bootstrap slow: each new pod's container is stopped (SIGSTOP on
// its node, as the freeze fault does) as soon as it runs, and resumed once it has been running
// for hold. To the kubelet it is an app that answers nothing while it boots: its probes time out
// until the hold is over. The cold start shows, as with a throttle, when a new pod becomes ready
// at least minSlower later than the slowest pod did before the fault.
type stoppedStart struct {
	hold     time.Duration
	baseline time.Duration // the slowest boot (start → ready) before the fault; < 0 unknown
	procs    NodeProcs
	prev     *corev1.EnvVar
}

func (s *stoppedStart) apply(ctr *corev1.Container) (string, bool) {
	s.prev = setEnv(ctr, ColdStartMarker, s.hold.String())
	if s.prev == nil {
		return "not stopped at start", true
	}
	return "stopped at start for " + s.prev.Value, s.prev.Value != s.hold.String()
}

func (s *stoppedStart) restore(ctr *corev1.Container) {
	if s.prev == nil {
		removeEnv(ctr, ColdStartMarker)
		return
	}
	setEnv(ctr, ColdStartMarker, s.prev.Value)
}

func (s *stoppedStart) setting() string {
	return fmt.Sprintf("container stopped (SIGSTOP) for its first %s", s.hold)
}

func (s *stoppedStart) carries(ctr corev1.Container) bool {
	for _, v := range ctr.Env {
		if v.Name == ColdStartMarker && v.Value == s.hold.String() {
			return true
		}
	}
	return false
}

func (s *stoppedStart) shows() (time.Duration, string) {
	if s.baseline < 0 {
		return s.hold, fmt.Sprintf("no boot before the fault to compare with: at least the %s stop", s.hold)
	}
	return s.baseline + minSlower, fmt.Sprintf("slowest boot before the fault %s + %s", secs(s.baseline), minSlower)
}

func (s *stoppedStart) params() map[string]string {
	p := map[string]string{"stop": s.hold.String()}
	if s.baseline >= 0 {
		p["baseline_boot_s"] = secsNum(s.baseline)
	}
	return p
}

// stopPoll is how often a stopped start looks for new containers: the stop lands within about
// this much (plus the node round trip) of the container starting.
var stopPoll = 250 * time.Millisecond

// stoppedPod is a new pod's container the cold start stopped.
type stoppedPod struct {
	name, node string
	pid        int   // the container's main process, stopped first
	more       []int // its other processes (an entrypoint wrapper's app), stopped after it
	started    time.Time
}

// holdStopped stops each new pod's container that carries the marker as soon as it runs and
// resumes it once it has run for the hold, until ctx ends; then it resumes every container still
// stopped (a revert or an interrupt never leaves one frozen). Each stop and resume is a mark.
func (c *ColdStart) holdStopped(ctx context.Context, s *stoppedStart, before map[string]bool) {
	seen := map[string]bool{}
	stopped := map[string]stoppedPod{}
	mark := func(name, detail string) {
		if c.Timeline != nil {
			c.Timeline.Append(timeline.Entry{Kind: timeline.KindMark, Mark: &timeline.Mark{Name: name, Detail: detail}})
		}
	}
	resume := func(ctx context.Context, uid string, sp stoppedPod, why string) {
		delete(stopped, uid)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
		defer cancel()
		for _, pid := range sp.more {
			_ = s.procs.Signal(sctx, sp.node, pid, "CONT") // a child that is gone has nothing to resume
		}
		if err := s.procs.Signal(sctx, sp.node, sp.pid, "CONT"); err != nil {
			if gone(err) {
				mark("cold-start-resume", fmt.Sprintf("cold-start: %s's container (pid %d) is gone: nothing to resume (%s)", sp.name, sp.pid, why))
				return
			}
			mark("cold-start-resume", fmt.Sprintf("cold-start: could not resume %s's container (pid %d on %s): %v", sp.name, sp.pid, sp.node, err))
			return
		}
		mark("cold-start-resume", fmt.Sprintf("cold-start: %s's container resumed (SIGCONT to pid %d) %s after it started (%s)",
			sp.name, sp.pid, secs(time.Since(sp.started)), why))
	}
	defer func() {
		for uid, sp := range stopped {
			resume(ctx, uid, sp, "the cold start ended")
		}
	}()
	for pause.For(ctx, stopPoll) == nil {
		for uid, sp := range stopped {
			if time.Since(sp.started) >= s.hold {
				resume(ctx, uid, sp, fmt.Sprintf("held %s", s.hold))
			}
		}
		pods, err := podsOf(ctx, c.Client, c.Namespace, c.Workload)
		if err != nil {
			continue
		}
		for i := range pods {
			p := &pods[i]
			uid := string(p.UID)
			if seen[uid] || p.Spec.NodeName == "" {
				continue
			}
			cs, ctr := c.runningNew(p, before, s)
			if cs == nil {
				continue
			}
			seen[uid] = true
			started := cs.State.Running.StartedAt.Time
			if at, ready := readySince(p); ready {
				// A boot faster than this poll: stopping it now would freeze a pod in rotation.
				mark("cold-start-stop", fmt.Sprintf("cold-start: %s was ready %s after its container started, before it could be stopped: not stopped",
					p.Name, secs(at.Sub(started))))
				continue
			}
			_, id, err := containerID(p, ctr.Name)
			if err != nil {
				mark("cold-start-stop", fmt.Sprintf("cold-start: could not stop %s: %v", p.Name, err))
				continue
			}
			pid, err := s.procs.ContainerPID(ctx, p.Spec.NodeName, id)
			if err != nil {
				mark("cold-start-stop", fmt.Sprintf("cold-start: could not find %s's container process on %s: %v", p.Name, p.Spec.NodeName, err))
				continue
			}
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
			err = s.procs.Signal(sctx, p.Spec.NodeName, pid, "STOP")
			cancel()
			sp := stoppedPod{name: p.Name, node: p.Spec.NodeName, pid: pid, started: started}
			if err != nil {
				resume(ctx, uid, sp, "its stop failed") // the STOP may have landed all the same
				mark("cold-start-stop", fmt.Sprintf("cold-start: could not stop %s's container (pid %d): %v", p.Name, pid, err))
				continue
			}
			// Then the rest of the container's processes: an entrypoint wrapper's app.
			if pids, err := s.procs.ContainerPIDs(ctx, p.Spec.NodeName, id); err == nil {
				for _, other := range pids {
					if other == pid {
						continue
					}
					sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
					if s.procs.Signal(sctx, p.Spec.NodeName, other, "STOP") == nil {
						sp.more = append(sp.more, other)
					}
					cancel()
				}
			}
			stopped[uid] = sp
			mark("cold-start-stop", fmt.Sprintf("cold-start: %s's container stopped (SIGSTOP to pid %d%s on %s through %s) %s after it started, for %s",
				p.Name, pid, others(sp.more), p.Spec.NodeName, s.procs.Via(p.Spec.NodeName), secs(time.Since(started)), s.hold))
		}
	}
}

// throttledStop is both slowings at once: the new pods boot under the CPU limit and are stopped
// as soon as their container runs (an app whose boot outruns the stop still boots throttled; one
// the throttle does not slow is still stopped). Each lifts after the hold.
type throttledStop struct {
	cpu  *cpuStart
	stop *stoppedStart
}

func (b *throttledStop) apply(ctr *corev1.Container) (string, bool) {
	wasCPU, cpuChanged := b.cpu.apply(ctr)
	wasStop, stopChanged := b.stop.apply(ctr)
	return wasCPU + ", " + wasStop, cpuChanged || stopChanged
}

func (b *throttledStop) restore(ctr *corev1.Container) {
	b.stop.restore(ctr)
	b.cpu.restore(ctr)
}

func (b *throttledStop) setting() string {
	return b.cpu.setting() + ", " + b.stop.setting()
}

// carries reads the marker only: the limit is lifted in place after the hold, and a pod that
// became ready later (stopped, then booting) must still be known as a new one.
func (b *throttledStop) carries(ctr corev1.Container) bool { return b.stop.carries(ctr) }

func (b *throttledStop) shows() (time.Duration, string) { return b.cpu.shows() }

func (b *throttledStop) params() map[string]string {
	p := b.cpu.params()
	for k, v := range b.stop.params() {
		p[k] = v
	}
	return p
}

// others words a container's other stopped processes for a mark ("" when none).
func others(pids []int) string {
	if len(pids) == 0 {
		return ""
	}
	return fmt.Sprintf(" and its %d other processes %v", len(pids), pids)
}
