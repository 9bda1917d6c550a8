// Package faults injects the failures probegate tests probes against: database slowness, timeouts and
// outages through toxiproxy, event-loop stalls through the target's admin port, process freezes
// through the node's container runtime, cold starts, pod deletions, evictions, rolling updates and
// overload. Each fault type lives in its own file, registers itself there (see Definition: its
// parameters, the target capabilities it needs, its proof of effect, the restart causes it explains)
// and implements Fault: Inject and Revert are idempotent and write every action (inject, observe = proof of effect, revert, skip) onto the
// timeline with the instant it happened. The runner's fault schedule (internal/runner) reverts
// whatever is still injected on teardown, on panic and on Ctrl-C.
package faults

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// Fault is one injectable failure. Inject and Revert are idempotent: a second Inject, or a Revert of
// a fault that is not injected, does nothing. One-shot faults (a deletion, an eviction, a rollout)
// have nothing to undo; their Revert does nothing.
type Fault interface {
	Type() string
	Inject(ctx context.Context) error
	Revert(ctx context.Context) error
}

// NodeExec runs a command inside the container of node (a Node name) and returns its output, as
// (*cluster.Cluster).NodeExecOn does.
type NodeExec func(ctx context.Context, node string, args ...string) ([]byte, error)

// RateSetter changes the load's rate and returns the previous one (loadgen.Load implements it).
type RateSetter interface {
	SetRate(rate float64) float64
}

// Recorder writes one fault's actions onto the timeline. Name identifies the fault instance (e.g.
// "faults[2]") so that its inject and revert pair up; Target names what it acted on.
type Recorder struct {
	Timeline *timeline.Timeline
	Type     string
	Name     string
}

// record appends one action, stamped now. pod, when set, names the entry's Pod and its "pod" param
// as the timeline knows the pod that has the name now (a StatefulSet's replacement keeps the name:
// see timeline.Incarnation).
func (r Recorder) record(action, target, pod, detail string, params map[string]string) timeline.Entry {
	return r.recordAt(time.Time{}, action, target, pod, detail, params)
}

// recordAt is record stamped at (now when zero): for an action that took effect before the fault
// could write it down (a freeze is in force once its last SIGSTOP returned, not once it has listed
// the container's processes again to be sure).
func (r Recorder) recordAt(at time.Time, action, target, pod, detail string, params map[string]string) timeline.Entry {
	if r.Timeline == nil {
		return timeline.Entry{}
	}
	key := pod
	if pod != "" {
		if params == nil {
			params = map[string]string{}
		}
		_, when := r.Timeline.Now()
		if !at.IsZero() {
			when = r.Timeline.Since(at)
		}
		key = timeline.IncarnationsOf(r.Timeline.Entries()).KeyAt(pod, when)
		params["pod"] = key
	}
	return r.Timeline.Append(timeline.Entry{At: at, Kind: timeline.KindFault, Pod: key, Fault: &timeline.FaultAction{
		Type: r.Type, Name: r.Name, Action: action, Target: target, Detail: detail, Params: params,
	}})
}

// state is the injected/reverted flag every fault keeps, so Inject and Revert are idempotent and
// safe to call from teardown while the schedule runs.
type state struct {
	mu       sync.Mutex
	injected bool
}

// begin locks the fault and reports whether the wanted transition applies (to inject: not yet
// injected; to revert: injected). The caller must call end.
func (s *state) begin(inject bool) bool {
	s.mu.Lock()
	return s.injected != inject
}

func (s *state) end(injected bool) {
	s.injected = injected
	s.mu.Unlock()
}

// proof records a proof of effect, an observe action: ok says whether the fault's effect was
// measured (ParamEffect EffectConfirmed) or not (EffectNotObserved); phase is PhaseDuring, PhaseAfter,
// or "" for a one-shot fault. detail says in words what was measured, with its numbers.
func (r Recorder) proof(target, pod, phase string, ok bool, detail string, params map[string]string) timeline.Entry {
	if params == nil {
		params = map[string]string{}
	}
	params[timeline.ParamEffect] = effect(ok)
	if phase != "" {
		params[timeline.ParamPhase] = phase
	}
	return r.record(timeline.FaultObserve, target, pod, detail, params)
}

// effect is the ParamEffect value for a proof that held (ok) or did not.
func effect(ok bool) string {
	if ok {
		return timeline.EffectConfirmed
	}
	return timeline.EffectNotObserved
}

// phase is the ParamPhase of a proof taken while the fault is active, or after its revert.
func phase(active bool) string {
	if active {
		return timeline.PhaseDuring
	}
	return timeline.PhaseAfter
}

func ms(d interface{ Milliseconds() int64 }) string { return fmt.Sprintf("%d", d.Milliseconds()) }
