// Package reportstest builds synthetic, deterministic runs for testing report writers and for the
// README's sample screenshot: timelines with endpoint transitions, restarts, probe failures,
// faults and per-second load, plus the matching requests.
package reportstest

import (
	"fmt"
	"sort"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// Start is the wall-clock instant every synthetic timeline starts at.
var Start = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// Builder records a synthetic scenario. Entries are stamped at the offsets given; the load
// generator is simulated from the endpoint states the builder has recorded.
type Builder struct {
	TL       *timeline.Timeline
	Requests []timeline.Request
	state    map[string][]stateAt
	pods     []string
}

type stateAt struct {
	t     time.Duration
	state *timeline.EndpointState // nil: no endpoint
}

// New returns an empty builder.
func New() *Builder {
	return &Builder{TL: timeline.New(Start), state: map[string][]stateAt{}}
}

func (b *Builder) add(t time.Duration, e timeline.Entry) timeline.Entry {
	e.T = t
	e.At = Start.Add(t)
	return b.TL.Append(e)
}

// Endpoint records a pod's endpoint moving to state to (nil: removed).
func (b *Builder) Endpoint(t time.Duration, pod string, to *timeline.EndpointState) timeline.Entry {
	hist := b.state[pod]
	var from *timeline.EndpointState
	if len(hist) > 0 {
		from = hist[len(hist)-1].state
	} else {
		b.pods = append(b.pods, pod)
	}
	change := timeline.EndpointChanged
	switch {
	case from == nil:
		change = timeline.EndpointAdded
	case to == nil:
		change = timeline.EndpointRemoved
	}
	b.state[pod] = append(hist, stateAt{t: t, state: to})
	return b.add(t, timeline.Entry{Kind: timeline.KindEndpoint, Pod: pod, Endpoint: &timeline.EndpointTransition{
		Change: change, Slice: "target-abcde", Address: fmt.Sprintf("10.244.0.%d", 10+b.podIndex(pod)), From: from, To: to,
	}})
}

func (b *Builder) podIndex(pod string) int {
	for i, p := range b.pods {
		if p == pod {
			return i
		}
	}
	return len(b.pods)
}

// Ready, NotReady, Draining (terminating and still serving), Terminating and Removed are the
// endpoint states a scenario passes through.
func (b *Builder) Ready(t time.Duration, pod string) timeline.Entry {
	return b.Endpoint(t, pod, &timeline.EndpointState{Ready: true, Serving: true})
}

// NotReady records ready=false, serving=false, terminating=false.
func (b *Builder) NotReady(t time.Duration, pod string) timeline.Entry {
	return b.Endpoint(t, pod, &timeline.EndpointState{})
}

// Draining records ready=false, serving=true, terminating=true.
func (b *Builder) Draining(t time.Duration, pod string) timeline.Entry {
	return b.Endpoint(t, pod, &timeline.EndpointState{Serving: true, Terminating: true})
}

// Terminating records ready=false, serving=false, terminating=true.
func (b *Builder) Terminating(t time.Duration, pod string) timeline.Entry {
	return b.Endpoint(t, pod, &timeline.EndpointState{Terminating: true})
}

// Removed records the endpoint going away.
func (b *Builder) Removed(t time.Duration, pod string) timeline.Entry {
	return b.Endpoint(t, pod, nil)
}

// Restart records a container restart with a cause.
func (b *Builder) Restart(t time.Duration, pod string, count int32, cause timeline.RestartCause) timeline.Entry {
	return b.add(t, timeline.Entry{Kind: timeline.KindRestart, Pod: pod, Restart: &timeline.ContainerRestart{
		Container: "app", RestartCount: count, Reason: "Error", ExitCode: 137, Cause: cause,
		Evidence: fmt.Sprintf("Killing event: container app failed %s probe", cause),
	}})
}

// ProbeFailure records a kubelet Unhealthy event.
func (b *Builder) ProbeFailure(t time.Duration, pod, probe string) timeline.Entry {
	return b.add(t, timeline.Entry{Kind: timeline.KindProbe, Pod: pod, Probe: &timeline.ProbeFailure{
		Probe: probe, Container: "app", Count: 1,
		Message: fmt.Sprintf("%s probe failed: Get \"http://10.244.0.11:8080/healthz\": context deadline exceeded", probe),
	}})
}

// Fault records a fault action (timeline.FaultInject, FaultRevert ...).
func (b *Builder) Fault(t time.Duration, typ, name, action, target string) timeline.Entry {
	return b.add(t, timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{
		Type: typ, Name: name, Action: action, Target: target,
	}})
}

// Mark records a scenario phase boundary.
func (b *Builder) Mark(t time.Duration, name string) timeline.Entry {
	return b.add(t, timeline.Entry{Kind: timeline.KindMark, Mark: &timeline.Mark{Name: name}})
}

// PodDeleted records the pod's deletion (deletionTimestamp set) with a grace period.
func (b *Builder) PodDeleted(t time.Duration, pod string, grace int64) timeline.Entry {
	return b.add(t, timeline.Entry{Kind: timeline.KindPod, Pod: pod, PodChange: &timeline.PodTransition{
		Field: "deleting", GracePeriodSeconds: &grace,
	}})
}

// LoadShape decides, for a request sent at t to pod, whether it fails (and how) and its latency.
type LoadShape func(t time.Duration, pod string) (class timeline.ErrorClass, status int, latency time.Duration)

// Load simulates a constant-rate load generator from from to to at rps requests per second,
// round-robin over the pods whose endpoint is serving at the moment of each request, and appends
// one LoadWindow per second. With no serving pod a request is refused.
func (b *Builder) Load(from, to time.Duration, rps int, shape LoadShape) {
	step := time.Second / time.Duration(rps)
	rr := 0
	seq := uint64(len(b.Requests))
	second := 0
	for ws := from; ws < to; ws += time.Second {
		w := &timeline.LoadWindow{Second: second, Rate: float64(rps), ByPod: map[string]int{}}
		var lats []time.Duration
		for t := ws; t < ws+time.Second && t < to; t += step {
			serving := b.servingAt(t)
			seq++
			q := timeline.Request{Seq: seq, T: t, Start: Start.Add(t), Bytes: 64}
			if len(serving) == 0 {
				q.Error, q.Latency, q.Detail = timeline.ErrRefused, time.Millisecond, "connect: connection refused"
			} else {
				q.Pod = serving[rr%len(serving)]
				rr++
				q.Error, q.Status, q.Latency = shape(t, q.Pod)
			}
			if q.Error == timeline.ErrNone && q.Status == 0 {
				q.Status = 200
			}
			b.Requests = append(b.Requests, q)
			w.Sent++
			lats = append(lats, q.Latency)
			if q.OK() {
				w.OK++
				w.ByPod[q.Pod]++
			} else {
				w.Failed++
				if w.Errors == nil {
					w.Errors = map[string]int{}
				}
				class := q.Error
				if class == timeline.ErrNone {
					class = timeline.ErrHTTP5xx
				}
				w.Errors[string(class)]++
			}
		}
		sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
		if n := len(lats); n > 0 {
			w.P50 = lats[(n-1)/2]
			w.P99 = lats[min(n-1, n*99/100)]
			w.SuccessRatio = float64(w.OK) / float64(n)
		}
		b.add(ws, timeline.Entry{Kind: timeline.KindLoad, Load: w})
		second++
	}
}

// servingAt lists the pods whose endpoint is ready at t, in first-seen order.
func (b *Builder) servingAt(t time.Duration) []string {
	var out []string
	for _, pod := range b.pods {
		var cur *timeline.EndpointState
		for _, s := range b.state[pod] {
			if s.t > t {
				break
			}
			cur = s.state
		}
		if cur != nil && cur.Ready {
			out = append(out, pod)
		}
	}
	return out
}

// Steady is a LoadShape where every request succeeds in 4–6 ms.
func Steady(t time.Duration, _ string) (timeline.ErrorClass, int, time.Duration) {
	return timeline.ErrNone, 200, 4*time.Millisecond + time.Duration(t.Milliseconds()%3)*time.Millisecond
}
