package verdict

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// deletionSlack is how long after a deleted pod's grace period its container's end may still be
// observed: the kubelet reporting it, the API's one-second timestamps and the watch delivering it
// (restartcause.LateSlack, which the verdict cannot import, is the same figure).
const deletionSlack = 5 * time.Second

// restartExplainer decides which fault explains a restart, with bounds on the pod, the time and the
// count (audit N1, N9):
//
//   - a liveness restart: a freeze or stall that acted on that pod, from the fault's start until its
//     end (its start when never reverted) + the oracle's liveness restart deadline; each such fault
//     explains one liveness restart of its pod. A frozen or stalled process is killed once; its
//     replacement is a new process the fault never touched, so a restart loop is not the fault's.
//   - a deletion or an eviction by a fault that names its pods (pod-delete, evict, node-drain): a
//     pod one of the fault's actions names, from that action until the grace period (the one the
//     fault's proof reported, else the pod's, else the oracle's) + deletionSlack.
//   - a deletion or an eviction by a rollout (rolling-update, cold-start), which names no pod: a pod
//     that existed before the rollout (or, for a reverted cold-start, before its restoring rollout),
//     at or after the fault's start. A rollout replaces each old pod once, at the controller's pace.
type restartExplainer struct {
	in     Input
	faults []timeline.FaultWindow
	pods   map[string]*podLife
	used   map[[2]string]bool // liveness: fault index and pod already explained
}

func newRestartExplainer(in Input) *restartExplainer {
	return &restartExplainer{in: in, faults: in.faults(), pods: buildPods(in.Entries), used: map[[2]string]bool{}}
}

// explain returns the fault that explains restart e. Call it on the restarts in time order: the
// first liveness restarts take the faults' one explanation each.
func (x *restartExplainer) explain(e timeline.Entry) (timeline.FaultWindow, bool) {
	types := explainers[e.Restart.Cause]
	for i, f := range x.faults {
		if f.Skipped || f.Start > e.T || !slices.Contains(types, f.Type) {
			continue
		}
		switch e.Restart.Cause {
		case timeline.CauseLiveness:
			key := [2]string{strconv.Itoa(i), e.Pod}
			if x.used[key] || (len(f.Pods) > 0 && !namesPod(f.Pods, e.Pod)) || e.T > x.livenessBound(f) {
				continue
			}
			x.used[key] = true
			return f, true
		case timeline.CauseDeletion, timeline.CauseEviction:
			if x.deleted(i, f, e) {
				return f, true
			}
		}
	}
	return timeline.FaultWindow{}, false
}

// livenessBound is the latest a liveness restart brought about by f may be observed.
func (x *restartExplainer) livenessBound(f timeline.FaultWindow) time.Duration {
	end := f.Start
	if f.Reverted {
		end = f.End
	}
	if lv := x.in.Oracle.Liveness; lv != nil {
		return end + lv.Restart.Deadline()
	}
	return end // no liveness probe: nothing restarts a pod by liveness
}

// deleted reports whether fault f (the i-th) deleted or evicted e's pod in time for e.
func (x *restartExplainer) deleted(i int, f timeline.FaultWindow, e timeline.Entry) bool {
	acts := x.podActions(i, f)
	if len(acts) == 0 || rolloutFaults[f.Type] {
		// A rollout: the pod must predate the rollout that replaced it. Its proof may name a new
		// pod (cold-start observes one booting), but the pods it deletes are the old ones it names
		// nowhere.
		last := f.Start
		if f.Reverted {
			last = f.End
		}
		p := x.pods[e.Pod]
		if p == nil || p.Created == nil {
			return true // seen only after the fact or from before the observers: nothing says it is newer
		}
		return min(p.Created.T, *p.CreatedAt) < last
	}
	for _, a := range acts {
		if a.pod != e.Pod || e.T < a.t {
			continue
		}
		grace := x.in.Oracle.Termination.GracePeriod
		if p := x.pods[e.Pod]; p != nil && p.Grace != nil {
			grace = *p.Grace
		}
		if a.grace != nil {
			grace = *a.grace
		}
		if ended(e) <= a.t+grace+deletionSlack {
			return true
		}
	}
	return false
}

// podAction is one of a fault's actions that names a pod, with the grace period it reported.
type podAction struct {
	pod   string
	t     time.Duration
	grace *time.Duration
}

// podActions returns the actions of fault f (the i-th window) that name a pod: its inject, and the
// observe actions of the same fault until its revert, or for a one-shot fault until the same
// fault's next window.
func (x *restartExplainer) podActions(i int, f timeline.FaultWindow) []podAction {
	until := time.Duration(1<<63 - 1)
	if f.Reverted {
		until = f.End
	} else {
		for _, g := range x.faults[i+1:] {
			if g.Type == f.Type && g.Name == f.Name && g.Start > f.Start {
				until = g.Start
				break
			}
		}
	}
	var out []podAction
	for _, e := range x.in.Entries {
		a := e.Fault
		if e.Kind != timeline.KindFault || a == nil || e.T < f.Start || e.T > until || a.Type != f.Type || (f.Name != "" && a.Name != f.Name) {
			continue
		}
		pod := e.Pod
		if pod == "" {
			pod = a.Params["pod"]
		}
		if pod == "" || (a.Action != timeline.FaultInject && a.Action != timeline.FaultObserve) {
			continue
		}
		pa := podAction{pod: pod, t: e.T}
		if g, err := strconv.Atoi(a.Params["grace_s"]); err == nil && g >= 0 {
			d := time.Duration(g) * time.Second
			pa.grace = &d
		}
		out = append(out, pa)
	}
	for _, p := range f.Pods {
		if !slices.ContainsFunc(out, func(a podAction) bool { return a.pod == p }) {
			out = append(out, podAction{pod: p, t: f.Start})
		}
	}
	return out
}

// namesPod reports whether pods names pod (any case).
func namesPod(pods []string, pod string) bool {
	return slices.ContainsFunc(pods, func(p string) bool { return strings.EqualFold(p, pod) })
}

// ended is when e's container ended, as near as the timeline knows: its finishedAt (the API's
// second, so up to a second late) when the restart carries one, else when it was observed. A busy
// kubelet and watch can deliver a deletion's end seconds after it happened; the bound is the
// container's, not the watch's.
func ended(e timeline.Entry) time.Duration {
	if e.Restart == nil || e.Restart.FinishedAt == nil || e.At.IsZero() {
		return e.T
	}
	return min(e.T, e.T+e.Restart.FinishedAt.Sub(e.At)+time.Second)
}
