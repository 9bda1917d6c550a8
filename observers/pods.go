package observers

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/probegate/probegate/internal/restartcause"
	"github.com/probegate/probegate/internal/timeline"
)

// podObserver turns pod updates into PodTransition and ContainerRestart entries.
//
// A ContainerRestart is written when a container instance ends for good or is restarted:
//   - restartCount rose: one entry per increment (only the last carries lastState.terminated facts;
//     more than one increment at once means restarts happened inside a watch gap);
//   - the pod is being deleted or has failed (eviction) and a container reached the terminated
//     state, or the pod disappeared before it did: RestartCount is unchanged, the cause is deletion
//     or eviction.
type podObserver struct {
	o     *Observer
	mu    sync.Mutex
	ended map[string]map[string]bool // pod UID → containers whose end was recorded
}

func (p *podObserver) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, _ bool) {
			if pod, ok := obj.(*corev1.Pod); ok {
				p.changed(p.o.stampOf(obj), nil, pod)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			oldPod, ok1 := oldObj.(*corev1.Pod)
			newPod, ok2 := newObj.(*corev1.Pod)
			if ok1 && ok2 {
				p.changed(p.o.stampOf(newObj), oldPod, newPod)
			}
		},
		DeleteFunc: func(obj any) {
			s := p.o.stampOf(obj)
			inner, _ := unwrap(obj)
			if pod, ok := inner.(*corev1.Pod); ok {
				p.deleted(s, pod)
			}
		},
	}
}

// changed records the differences between old (nil when the pod is new to the observer) and pod.
func (p *podObserver) changed(s stamp, old, pod *corev1.Pod) {
	for _, c := range podTransitions(old, pod) {
		p.o.append(s, timeline.Entry{Kind: timeline.KindPod, Pod: p.o.ids.key(pod.Name, pod.UID), APITime: c.api, PodChange: c.tr})
	}
	if old == nil {
		return
	}
	for _, r := range restartCountRises(old, pod) {
		p.restart(s, p.o.ids.key(pod.Name, pod.UID), r)
	}
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		oldStates := containerStatuses(old)
		for name, st := range containerStatuses(pod) {
			was, ok := oldStates[name]
			if st.State.Terminated == nil || (ok && was.State.Terminated != nil) {
				continue
			}
			if p.markEnded(pod.UID, name) {
				p.restart(s, p.o.ids.key(pod.Name, pod.UID), termination(name, st, st.State.Terminated))
			}
		}
	}
}

// deleted records the pod's removal and the end of any container whose end was not yet seen.
func (p *podObserver) deleted(s stamp, pod *corev1.Pod) {
	p.o.append(s, timeline.Entry{Kind: timeline.KindPod, Pod: p.o.ids.key(pod.Name, pod.UID), PodChange: &timeline.PodTransition{Field: "deleted", From: string(pod.Status.Phase)}})
	for name, st := range containerStatuses(pod) {
		if st.State.Terminated == nil && st.State.Running == nil && st.LastTerminationState.Terminated == nil && st.RestartCount == 0 && !boolOf(st.Started) {
			continue // never ran
		}
		if p.markEnded(pod.UID, name) {
			p.restart(s, p.o.ids.key(pod.Name, pod.UID), termination(name, st, st.State.Terminated))
		}
	}
	p.mu.Lock()
	delete(p.ended, string(pod.UID))
	p.mu.Unlock()
}

// markEnded records that the container's end was written; false if it already was.
func (p *podObserver) markEnded(uid types.UID, container string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.ended[string(uid)]
	if m == nil {
		m = map[string]bool{}
		p.ended[string(uid)] = m
	}
	if m[container] {
		return false
	}
	m[container] = true
	return true
}

// restart appends a ContainerRestart with the cause attributed from the timeline so far.
func (p *podObserver) restart(s stamp, pod string, r *timeline.ContainerRestart) {
	e := timeline.Entry{Kind: timeline.KindRestart, Pod: pod, At: s.at, T: s.t, APITime: r.FinishedAt, Restart: r}
	if r.Cause == "" {
		r.Cause, r.Evidence = restartcause.Attribute(e, p.o.tl.Entries())
	}
	p.o.append(s, e)
}

// unseenRestart is the evidence of a restart that happened inside a watch gap and was followed by
// another before the relist: nothing is known about it.
const unseenRestart = "restarted while the watch was away; only the last termination is known"

// podChange is one PodTransition with the API time it carries, if any.
type podChange struct {
	tr  *timeline.PodTransition
	api *time.Time
}

// podTransitions lists what changed from old (nil: everything) to pod.
func podTransitions(old, pod *corev1.Pod) []podChange {
	var out []podChange
	add := func(field, from, to, detail string, api *time.Time) {
		if from == to && old != nil {
			return
		}
		out = append(out, podChange{tr: &timeline.PodTransition{Field: field, From: from, To: to, Detail: detail}, api: api})
	}
	var was corev1.Pod
	if old != nil {
		was = *old
	} else {
		out = append(out, podChange{tr: &timeline.PodTransition{Field: "created", To: string(pod.Status.Phase)}, api: apiTime(pod.CreationTimestamp.Time)})
	}
	if was.Status.Phase != pod.Status.Phase {
		add("phase", string(was.Status.Phase), string(pod.Status.Phase), pod.Status.Reason, nil)
	}
	wasCond := map[corev1.PodConditionType]corev1.PodCondition{}
	for _, c := range was.Status.Conditions {
		wasCond[c.Type] = c
	}
	for _, c := range pod.Status.Conditions {
		if w, ok := wasCond[c.Type]; ok && w.Status == c.Status {
			continue
		}
		add("condition/"+string(c.Type), string(wasCond[c.Type].Status), string(c.Status), c.Reason, apiTime(c.LastTransitionTime.Time))
	}
	wasCS, nowCS := containerStatuses(&was), containerStatuses(pod)
	for _, name := range containerNames(pod) {
		st := nowCS[name]
		w, known := wasCS[name]
		prefix := "container/" + name + "/"
		if !known || boolOf(w.Started) != boolOf(st.Started) {
			add(prefix+"started", fromBool(known, boolOf(w.Started)), strconv.FormatBool(boolOf(st.Started)), "", nil)
		}
		if !known || w.Ready != st.Ready {
			add(prefix+"ready", fromBool(known, w.Ready), strconv.FormatBool(st.Ready), "", nil)
		}
		from, to := stateOf(w.State), stateOf(st.State)
		if !known {
			from = ""
		}
		if from != to && to != "" {
			add(prefix+"state", from, to, stateDetail(st.State), stateTime(st.State))
		}
	}
	if was.DeletionTimestamp == nil && pod.DeletionTimestamp != nil {
		c := podChange{tr: &timeline.PodTransition{Field: "deleting", To: "true", GracePeriodSeconds: pod.DeletionGracePeriodSeconds,
			Detail: "deletionTimestamp " + pod.DeletionTimestamp.UTC().Format(time.RFC3339)}}
		// deletionTimestamp is the deadline (request time + grace period); the request time is the event.
		at := pod.DeletionTimestamp.Time
		if g := pod.DeletionGracePeriodSeconds; g != nil {
			at = at.Add(-time.Duration(*g) * time.Second)
		}
		c.api = apiTime(at)
		out = append(out, c)
	}
	return out
}

// restartCountRises returns one restart per increment of each container's restartCount.
func restartCountRises(old, pod *corev1.Pod) []*timeline.ContainerRestart {
	var out []*timeline.ContainerRestart
	wasCS, nowCS := containerStatuses(old), containerStatuses(pod)
	for _, name := range containerNames(pod) {
		st := nowCS[name]
		w, ok := wasCS[name]
		if !ok || st.RestartCount <= w.RestartCount {
			continue
		}
		for n := w.RestartCount + 1; n < st.RestartCount; n++ {
			out = append(out, &timeline.ContainerRestart{Container: name, RestartCount: n, Cause: timeline.CauseUnknown, Evidence: unseenRestart})
		}
		out = append(out, termination(name, st, st.LastTerminationState.Terminated))
	}
	return out
}

// termination builds a ContainerRestart from a container status and its termination facts.
func termination(name string, st corev1.ContainerStatus, t *corev1.ContainerStateTerminated) *timeline.ContainerRestart {
	r := &timeline.ContainerRestart{Container: name, RestartCount: st.RestartCount}
	if t != nil {
		r.Reason, r.ExitCode = t.Reason, t.ExitCode
		r.FinishedAt = apiTime(t.FinishedAt.Time)
	}
	return r
}

// containerStatuses indexes init and app container statuses by name (init containers as "init:<name>").
func containerStatuses(pod *corev1.Pod) map[string]corev1.ContainerStatus {
	out := map[string]corev1.ContainerStatus{}
	if pod == nil {
		return out
	}
	for _, s := range pod.Status.InitContainerStatuses {
		out["init:"+s.Name] = s
	}
	for _, s := range pod.Status.ContainerStatuses {
		out[s.Name] = s
	}
	return out
}

// containerNames lists the container status names in a stable order.
func containerNames(pod *corev1.Pod) []string {
	var out []string
	for _, s := range pod.Status.InitContainerStatuses {
		out = append(out, "init:"+s.Name)
	}
	for _, s := range pod.Status.ContainerStatuses {
		out = append(out, s.Name)
	}
	return out
}

func stateOf(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return fmt.Sprintf("terminated:%s:%d", s.Terminated.Reason, s.Terminated.ExitCode)
	case s.Waiting != nil:
		return "waiting:" + s.Waiting.Reason
	}
	return ""
}

func stateDetail(s corev1.ContainerState) string {
	switch {
	case s.Terminated != nil:
		return s.Terminated.Message
	case s.Waiting != nil:
		return s.Waiting.Message
	}
	return ""
}

func stateTime(s corev1.ContainerState) *time.Time {
	switch {
	case s.Running != nil:
		return apiTime(s.Running.StartedAt.Time)
	case s.Terminated != nil:
		return apiTime(s.Terminated.FinishedAt.Time)
	}
	return nil
}

func apiTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func boolOf(b *bool) bool { return b != nil && *b }

func fromBool(known, b bool) string {
	if !known {
		return ""
	}
	return strconv.FormatBool(b)
}
