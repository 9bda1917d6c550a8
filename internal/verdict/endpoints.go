package verdict

import (
	"sort"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// epState is one endpoint's condition from an entry on. Present is false once it was removed (or
// before it appeared).
type epState struct {
	T           time.Duration
	Seq         int64
	Present     bool
	Ready       bool
	Terminating bool
}

// serving reports whether the endpoint receives new traffic: present and ready.
func (s epState) serving() bool { return s.Present && s.Ready }

// endpointHistory is every endpoint's state changes, by pod (or address when the endpoint names no
// pod), in time order.
type endpointHistory struct {
	byPod map[string][]epState
	pods  []string
}

func endpointKey(e timeline.Entry) string {
	if e.Pod != "" {
		return e.Pod
	}
	return e.Endpoint.Address
}

func buildEndpoints(entries []timeline.Entry) endpointHistory {
	h := endpointHistory{byPod: map[string][]epState{}}
	for _, e := range entries {
		if e.Kind != timeline.KindEndpoint || e.Endpoint == nil {
			continue
		}
		k := endpointKey(e)
		s := epState{T: e.T, Seq: e.Seq}
		if to := e.Endpoint.To; to != nil && e.Endpoint.Change != timeline.EndpointRemoved {
			s.Present, s.Ready, s.Terminating = true, to.Ready, to.Terminating
		}
		if _, seen := h.byPod[k]; !seen {
			h.pods = append(h.pods, k)
		}
		h.byPod[k] = append(h.byPod[k], s)
	}
	sort.Strings(h.pods)
	return h
}

// at returns pod's endpoint state at t (the last change at or before t).
func (h endpointHistory) at(pod string, t time.Duration) epState {
	var cur epState
	for _, s := range h.byPod[pod] {
		if s.T > t {
			break
		}
		cur = s
	}
	return cur
}

// readyAt returns the pods whose endpoint is ready at t, sorted.
func (h endpointHistory) readyAt(t time.Duration) []string {
	var out []string
	for _, p := range h.pods {
		if h.at(p, t).serving() {
			out = append(out, p)
		}
	}
	return out
}

// withdrawal returns pod's first change at or after t from ready to not ready (or removed).
func (h endpointHistory) withdrawal(pod string, t time.Duration) (epState, bool) {
	prev := h.at(pod, t-1)
	for _, s := range h.byPod[pod] {
		if s.T < t {
			continue
		}
		if prev.serving() && !s.serving() {
			return s, true
		}
		prev = s
	}
	return epState{}, false
}

// readyAgain returns pod's first change at or after t to ready.
func (h endpointHistory) readyAgain(pod string, t time.Duration) (epState, bool) {
	for _, s := range h.byPod[pod] {
		if s.T >= t && s.serving() {
			return s, true
		}
	}
	return epState{}, false
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
		s   epState
	}
	var all []change
	for _, p := range h.pods {
		for _, s := range h.byPod[p] {
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
		cur[c.pod] = c.s.serving()
		var ready []string
		for _, p := range h.pods {
			if cur[p] {
				ready = append(ready, p)
			}
		}
		out = append(out, readyStep{T: c.s.T, Seq: c.s.Seq, Pod: c.pod, Ready: ready})
	}
	return out
}
