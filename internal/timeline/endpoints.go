package timeline

import (
	"sort"
	"time"
)

// EndpointStep is one endpoint's conditions from T on, set by the entry numbered Seq. Present is
// false once the endpoint was removed (and before it appeared).
type EndpointStep struct {
	T       time.Duration
	Seq     int64
	Present bool
	EndpointState
}

// InRotation reports whether the endpoint receives new traffic: present, ready and not terminating.
func (s EndpointStep) InRotation() bool { return s.Present && s.Ready && !s.Terminating }

// EndpointKey names the endpoint an entry is about: its pod, else its address.
func EndpointKey(e Entry) string {
	if e.Pod != "" {
		return e.Pod
	}
	return e.Endpoint.Address
}

// EndpointHistory is every endpoint's state over the run, by pod (or address when the endpoint
// names no pod), each in time order. It is the one reading of EndpointSlice transitions that
// verdicts, reports and the runner share.
type EndpointHistory struct {
	ByPod map[string][]EndpointStep
	Pods  []string // sorted
}

// Endpoints reads the endpoint entries of entries (in time order) into an EndpointHistory.
func Endpoints(entries []Entry) EndpointHistory {
	h := EndpointHistory{ByPod: map[string][]EndpointStep{}}
	for _, e := range entries {
		if e.Kind != KindEndpoint || e.Endpoint == nil {
			continue
		}
		k := EndpointKey(e)
		s := EndpointStep{T: e.T, Seq: e.Seq}
		if to := e.Endpoint.To; to != nil && e.Endpoint.Change != EndpointRemoved {
			s.Present, s.EndpointState = true, *to
		}
		if _, seen := h.ByPod[k]; !seen {
			h.Pods = append(h.Pods, k)
		}
		h.ByPod[k] = append(h.ByPod[k], s)
	}
	sort.Strings(h.Pods)
	return h
}

// At returns pod's endpoint state at t (the last change at or before t).
func (h EndpointHistory) At(pod string, t time.Duration) EndpointStep {
	var cur EndpointStep
	for _, s := range h.ByPod[pod] {
		if s.T > t {
			break
		}
		cur = s
	}
	return cur
}

// ReadyAt returns the pods whose endpoint is in rotation at t, sorted.
func (h EndpointHistory) ReadyAt(t time.Duration) []string {
	var out []string
	for _, p := range h.Pods {
		if h.At(p, t).InRotation() {
			out = append(out, p)
		}
	}
	return out
}

// EndpointBand is a stretch of time during which one pod's endpoint had one set of conditions.
type EndpointBand struct {
	Pod   string
	From  time.Duration
	To    time.Duration
	State EndpointState
}

// Bands returns every endpoint's stretches of constant conditions while it existed, the last one
// of each closed at end, ordered by start.
func (h EndpointHistory) Bands(end time.Duration) []EndpointBand {
	var out []EndpointBand
	for _, p := range h.Pods {
		steps := h.ByPod[p]
		for i, s := range steps {
			if !s.Present {
				continue
			}
			to := max(end, 0)
			if i+1 < len(steps) {
				to = steps[i+1].T
			}
			if to <= s.T {
				continue
			}
			out = append(out, EndpointBand{Pod: p, From: s.T, To: to, State: s.EndpointState})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].From < out[j].From })
	return out
}

// Never is the end of a span that did not end during the run.
const Never = time.Duration(1<<63 - 1)

// Withdrawal is one span of a pod out of rotation: From is the change that took it out (ready to
// not ready, terminating or removed), Back when it was in rotation again (Never if not in the run).
type Withdrawal struct {
	Pod  string
	From EndpointStep
	Back time.Duration
}

// Withdrawals returns every span out of rotation that began with a withdrawal, by pod (in Pods'
// order), each pod's in time order. An endpoint that was never in rotation has none.
func (h EndpointHistory) Withdrawals() []Withdrawal {
	var out []Withdrawal
	for _, pod := range h.Pods {
		steps := h.ByPod[pod]
		for i := 1; i < len(steps); i++ {
			if !steps[i-1].InRotation() || steps[i].InRotation() {
				continue
			}
			w := Withdrawal{Pod: pod, From: steps[i], Back: Never}
			for _, s := range steps[i+1:] {
				if s.InRotation() {
					w.Back = s.T
					break
				}
			}
			out = append(out, w)
		}
	}
	return out
}
