package verdict

import (
	"sort"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// endpointHistory is the run's endpoint states (timeline.Endpoints) with the questions rules ask.
type endpointHistory struct{ timeline.EndpointHistory }

func buildEndpoints(entries []timeline.Entry) endpointHistory {
	return endpointHistory{timeline.Endpoints(entries)}
}

// withdrawal returns pod's first change at or after t from ready to not ready (or removed).
func (h endpointHistory) withdrawal(pod string, t time.Duration) (timeline.EndpointStep, bool) {
	prev := h.At(pod, t-1)
	for _, s := range h.ByPod[pod] {
		if s.T < t {
			continue
		}
		if prev.InRotation() && !s.InRotation() {
			return s, true
		}
		prev = s
	}
	return timeline.EndpointStep{}, false
}

// readyAgain returns pod's first change at or after t to ready.
func (h endpointHistory) readyAgain(pod string, t time.Duration) (timeline.EndpointStep, bool) {
	for _, s := range h.ByPod[pod] {
		if s.T >= t && s.InRotation() {
			return s, true
		}
	}
	return timeline.EndpointStep{}, false
}

// readyStep is the number of ready endpoints from T on, and the change that set it.
type readyStep struct {
	T     time.Duration
	Seq   int64
	Pod   string
	Ready []string
}

// steps returns the ready set after every endpoint change, in time order.
func (h endpointHistory) steps() []readyStep {
	type change struct {
		pod string
		s   timeline.EndpointStep
	}
	var all []change
	for _, p := range h.Pods {
		for _, s := range h.ByPod[p] {
			all = append(all, change{p, s})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].s.T != all[j].s.T {
			return all[i].s.T < all[j].s.T
		}
		return all[i].s.Seq < all[j].s.Seq
	})
	cur := map[string]bool{}
	var out []readyStep
	for _, c := range all {
		cur[c.pod] = c.s.InRotation()
		var ready []string
		for _, p := range h.Pods {
			if cur[p] {
				ready = append(ready, p)
			}
		}
		out = append(out, readyStep{T: c.s.T, Seq: c.s.Seq, Pod: c.pod, Ready: ready})
	}
	return out
}

// readyOver returns the ready set at span's start and after every endpoint change within it.
func (h endpointHistory) readyOver(span Span) []readyStep {
	out := []readyStep{{T: span.Start, Ready: h.ReadyAt(span.Start)}}
	for _, s := range h.steps() {
		if s.T > span.Start && s.T <= span.End {
			out = append(out, s)
		}
	}
	return out
}
