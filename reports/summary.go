package reports

import (
	"sort"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// Summary holds the figures a reader checks first: how much load ran and how it failed, how traffic
// was shared between pods, why containers restarted and how long each pod's endpoint was out.
type Summary struct {
	// Span is the observed stretch of the run: from the timeline's start to its last entry or
	// request end.
	Span     time.Duration   `json:"span"`
	Requests RequestFigures  `json:"requests"`
	Pods     []PodFigures    `json:"pods,omitempty"`
	Restarts map[string]int  `json:"restarts,omitempty"`
	Faults   []FaultInterval `json:"faults,omitempty"`
	// Slice is the first hop after a pod leaves service: its change (readiness, deletion) to the
	// EndpointSlice's withdrawal. Propagation and Door are the next.
	Slice *SliceLag `json:"sliceLag,omitempty"`
	// Propagation is each watched node's kube-proxy lag after the run's withdrawals.
	Propagation []NodePropagation `json:"propagation,omitempty"`
	// Door is the front door's lag after the run's withdrawals, when the load went through one
	// that keeps its own record (an ingress controller); kube-proxy is then not on the load's path.
	Door *DoorPropagation `json:"doorPropagation,omitempty"`
	// Host is how starved for CPU the machine running a local cluster was (nil for a remote one).
	Host *HostFigures `json:"host,omitempty"`
}

// RequestFigures counts the load. Sent comes from the load generator's per-second windows (what
// it attempted; the recorded count when there are no windows); Recorded is the number of requests saved in requests.jsonl. Failures are counted
// by error class from the recorded requests, or from the windows when none were recorded.
type RequestFigures struct {
	Sent          int            `json:"sent"`
	Recorded      int            `json:"recorded"`
	OK            int            `json:"ok"`
	Failed        int            `json:"failed"`
	FailedByClass map[string]int `json:"failedByClass,omitempty"`
	// Resent counts requests the client had to send twice (a kept-alive connection was cut under the
	// first attempt); they are in OK when the resend succeeded.
	Resent       int           `json:"resent,omitempty"`
	SuccessRatio float64       `json:"successRatio"`
	P50          time.Duration `json:"p50"`
	P99          time.Duration `json:"p99"`
	Max          time.Duration `json:"max"`
}

// PodFigures is one pod's share of traffic and time out of service. An endpoint is NotReady while
// it exists with ready=false and is not terminating, and Terminating while terminating=true;
// both are measured from the pod's first endpoint until it was removed or the run ended.
type PodFigures struct {
	Pod         string        `json:"pod"`
	Requests    int           `json:"requests"`
	Share       float64       `json:"share"`
	Restarts    int           `json:"restarts"`
	Ready       time.Duration `json:"ready"`
	NotReady    time.Duration `json:"notReady"`
	Terminating time.Duration `json:"terminating"`
}

// FaultInterval is one fault from inject to revert (or to the end of the run), or a skipped one.
// Effect is its proof of effect (confirmed, not-observed or empty); Note says why it cannot count
// as having acted, when it cannot.
type FaultInterval struct {
	Type     string        `json:"type"`
	Name     string        `json:"name,omitempty"`
	Target   string        `json:"target,omitempty"`
	From     time.Duration `json:"from"`
	To       time.Duration `json:"to"`
	Reverted bool          `json:"reverted"`
	Skipped  bool          `json:"skipped,omitempty"`
	Effect   string        `json:"effect,omitempty"`
	Note     string        `json:"note,omitempty"`
}

// Summarise computes the summary figures of one scenario from its timeline entries and recorded
// requests. It is pure: the same input always gives the same figures.
func Summarise(entries []timeline.Entry, reqs []timeline.Request) Summary {
	var s Summary
	s.Span = span(entries, reqs)
	s.Requests = requestFigures(entries, reqs)
	s.Faults = FaultIntervals(entries, s.Span)
	s.Slice = sliceLag(entries)
	s.Propagation = propagation(entries, reqs)
	s.Door = doorPropagation(entries, reqs)
	s.Host = hostFigures(entries)

	pods := map[string]*PodFigures{}
	pod := func(name string) *PodFigures {
		p := pods[name]
		if p == nil {
			p = &PodFigures{Pod: name}
			pods[name] = p
		}
		return p
	}
	// Traffic share: from recorded requests when there are any, else the load windows.
	shareTotal := 0
	if len(reqs) > 0 {
		for _, q := range reqs {
			if q.Pod != "" {
				pod(q.Pod).Requests++
				shareTotal++
			}
		}
	} else {
		for _, e := range entries {
			if e.Load == nil {
				continue
			}
			for name, n := range e.Load.ByPod {
				pod(name).Requests += n
				shareTotal += n
			}
		}
	}
	for _, e := range entries {
		if e.Restart == nil {
			continue
		}
		if s.Restarts == nil {
			s.Restarts = map[string]int{}
		}
		cause := string(e.Restart.Cause)
		if cause == "" {
			cause = string(timeline.CauseUnknown)
		}
		s.Restarts[cause]++
		if e.Pod != "" {
			pod(e.Pod).Restarts++
		}
	}
	for _, b := range timeline.Endpoints(entries).Bands(s.Span) {
		p := pod(b.Pod)
		d := b.To - b.From
		switch {
		case b.State.Terminating:
			p.Terminating += d
		case b.State.Ready:
			p.Ready += d
		default:
			p.NotReady += d
		}
	}
	for _, p := range pods {
		if shareTotal > 0 {
			p.Share = float64(p.Requests) / float64(shareTotal)
		}
		s.Pods = append(s.Pods, *p)
	}
	sort.Slice(s.Pods, func(i, j int) bool { return s.Pods[i].Pod < s.Pods[j].Pod })
	return s
}

// span is the end of the observed run: the latest entry offset or request end.
func span(entries []timeline.Entry, reqs []timeline.Request) time.Duration {
	var end time.Duration
	for _, e := range entries {
		end = max(end, e.T)
	}
	for _, q := range reqs {
		end = max(end, q.End())
	}
	return end
}

func requestFigures(entries []timeline.Entry, reqs []timeline.Request) RequestFigures {
	var f RequestFigures
	windowFailed := map[string]int{}
	windowOK, windowFailures := 0, 0
	for _, e := range entries {
		if e.Load == nil {
			continue
		}
		f.Sent += e.Load.Sent
		windowOK += e.Load.OK
		windowFailures += e.Load.Failed
		for class, n := range e.Load.Errors {
			windowFailed[class] += n
		}
	}
	f.Recorded = len(reqs)
	if f.Sent == 0 {
		f.Sent = f.Recorded // no load windows: what was recorded is all we know was sent
	}
	if len(reqs) == 0 {
		f.OK, f.Failed = windowOK, windowFailures
		if len(windowFailed) > 0 {
			f.FailedByClass = windowFailed
		}
	} else {
		lat := make([]time.Duration, 0, len(reqs))
		for _, q := range reqs {
			lat = append(lat, q.Latency)
			if q.Retried {
				f.Resent++
			}
			if q.OK() {
				f.OK++
				continue
			}
			f.Failed++
			if f.FailedByClass == nil {
				f.FailedByClass = map[string]int{}
			}
			f.FailedByClass[string(q.Class())]++
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		f.P50 = quantile(lat, 0.50)
		f.P99 = quantile(lat, 0.99)
		f.Max = lat[len(lat)-1]
	}
	if n := f.OK + f.Failed; n > 0 {
		f.SuccessRatio = float64(f.OK) / float64(n)
	}
	return f
}

// quantile is the nearest-rank quantile of sorted values.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q*float64(len(sorted))+0.999999999) - 1
	rank = min(max(rank, 0), len(sorted)-1)
	return sorted[rank]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FaultIntervals places each fault of the run as the verdicts see it (timeline.FaultWindows): a
// fault never reverted lasts until end; a skipped one is kept, zero-width, with why.
func FaultIntervals(entries []timeline.Entry, end time.Duration) []FaultInterval {
	var out []FaultInterval
	for _, f := range timeline.FaultWindows(entries) {
		fi := FaultInterval{Type: f.Type, Name: f.Name, Target: f.Target, From: f.Start, To: f.End, Reverted: f.Reverted,
			Skipped: f.Skipped, Effect: f.Effect, Note: f.Unproven()}
		if !f.Reverted && !f.Skipped {
			fi.To = max(end, f.Start)
		}
		out = append(out, fi)
	}
	return out
}
