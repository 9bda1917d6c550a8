package observers

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/probegate/probegate/internal/timeline"
)

// eventHandler writes the namespace's Kubernetes events: Unhealthy as ProbeFailure, everything
// else (Killing, BackOff, Started, Pulled, Scheduled, FailedScheduling, Evicted, Preempting ...) as
// Event. Events listed when the observer starts are history from before the run and are skipped;
// each later occurrence (a new event or a count increase of an aggregated one) is one entry.
func eventHandler(o *Observer) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if ev, ok := obj.(*corev1.Event); ok && !initial {
				o.append(o.stampOf(obj), eventEntry(ev, &o.ids))
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*corev1.Event)
			ev, ok2 := newObj.(*corev1.Event)
			if !ok1 || !ok2 || !occurredAgain(old, ev) {
				return
			}
			o.append(o.stampOf(newObj), eventEntry(ev, &o.ids))
		},
	}
}

// occurredAgain reports whether an event update is a new occurrence rather than a no-op resync.
func occurredAgain(old, ev *corev1.Event) bool {
	if old.Count != ev.Count || !old.LastTimestamp.Equal(&ev.LastTimestamp) {
		return true
	}
	if old.Series != nil || ev.Series != nil {
		if old.Series == nil || ev.Series == nil {
			return true
		}
		return old.Series.Count != ev.Series.Count
	}
	return false
}

// eventEntry converts one event occurrence; ids names its pod.
func eventEntry(ev *corev1.Event, ids *incarnations) timeline.Entry {
	e := timeline.Entry{APITime: eventTime(ev)}
	if ev.InvolvedObject.Kind == "Pod" {
		e.Pod = ids.key(ev.InvolvedObject.Name, ev.InvolvedObject.UID)
	}
	count := ev.Count
	if ev.Series != nil {
		count = ev.Series.Count
	}
	if count == 0 {
		count = 1
	}
	if ev.Reason == "Unhealthy" {
		if kind := probeKind(ev.Message); kind != "" {
			e.Kind = timeline.KindProbe
			e.Probe = &timeline.ProbeFailure{Probe: kind, Container: containerOf(ev.InvolvedObject.FieldPath), Message: ev.Message, Count: count}
			return e
		}
	}
	e.Kind = timeline.KindEvent
	e.Event = &timeline.Event{Reason: ev.Reason, Type: ev.Type, Object: ev.InvolvedObject.Kind + "/" + ev.InvolvedObject.Name, Message: ev.Message, Count: count}
	return e
}

// probeKind parses "Liveness probe failed: ...", "Readiness probe failed" or "Startup probe ...".
func probeKind(msg string) string {
	switch {
	case strings.HasPrefix(msg, "Liveness probe"):
		return timeline.ProbeLiveness
	case strings.HasPrefix(msg, "Readiness probe"):
		return timeline.ProbeReadiness
	case strings.HasPrefix(msg, "Startup probe"):
		return timeline.ProbeStartup
	}
	return ""
}

// containerOf extracts the container name from a field path such as "spec.containers{app}".
func containerOf(fieldPath string) string {
	_, rest, ok := strings.Cut(fieldPath, "{")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "}")
	return name
}

// eventTime is the time of the event's latest occurrence, as precise as the API gives it.
func eventTime(ev *corev1.Event) *time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return apiTime(ev.Series.LastObservedTime.Time)
	case !ev.LastTimestamp.IsZero():
		return apiTime(ev.LastTimestamp.Time)
	case !ev.EventTime.IsZero():
		return apiTime(ev.EventTime.Time)
	}
	return apiTime(ev.FirstTimestamp.Time)
}
