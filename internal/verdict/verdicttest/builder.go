// Package verdicttest builds recorded runs fluently for tests of verdict rules and reports:
//
//	in := verdicttest.New().
//		Ready(0, "a", "b", "c").
//		Traffic(0, 60*time.Second, 30).
//		Inject(10*time.Second, "stall", "a").
//		NotReady(13*time.Second, "a").
//		Input()
//
// Entries get increasing Seq numbers in the order they are added and are sorted by T on output.
// Traffic is generated when Input is called, served round-robin by the pods whose endpoint is
// ready at each request's start (a perfect load balancer), so endpoint changes steer it.
package verdicttest

import (
	"fmt"
	"sort"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
)

// Container is the container name the builder uses for pod transitions and restarts.
const Container = "app"

// Start is the wall-clock instant offset 0 maps to.
var Start = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// Builder accumulates a run. Its methods return the builder for chaining.
type Builder struct {
	entries  []timeline.Entry
	requests []timeline.Request
	traffic  []traffic
	seq      int64
	rseq     uint64
	eps      map[string]*timeline.EndpointState
	nodes    map[string]string // pod → node its endpoint names (default probegate-control-plane)
	restarts map[string]int32
	oracle   oracle.Oracle
	faults   []timeline.FaultWindow
	load     verdict.Span
}

type traffic struct {
	from, to time.Duration
	rate     int
}

// New returns an empty run judged against DefaultOracle.
func New() *Builder {
	return &Builder{eps: map[string]*timeline.EndpointState{}, nodes: map[string]string{}, restarts: map[string]int32{}, oracle: DefaultOracle()}
}

// Oracle sets the timing oracle.
func (b *Builder) Oracle(o oracle.Oracle) *Builder { b.oracle = o; return b }

// Faults sets Input.Faults explicitly (instead of deriving them from fault entries).
func (b *Builder) Faults(f ...timeline.FaultWindow) *Builder { b.faults = f; return b }

// LoadSpan sets Input.Load explicitly.
func (b *Builder) LoadSpan(from, to time.Duration) *Builder {
	b.load = verdict.Span{Start: from, End: to}
	return b
}

// Entry appends a raw entry (its Seq and At are set by the builder).
func (b *Builder) Entry(e timeline.Entry) *Builder {
	b.seq++
	e.Seq = b.seq
	e.At = Start.Add(e.T)
	b.entries = append(b.entries, e)
	return b
}

// OnNode makes the pods' endpoint entries from now on name node.
func (b *Builder) OnNode(node string, pods ...string) *Builder {
	for _, p := range pods {
		b.nodes[p] = node
	}
	return b
}

// Placement records the workload (at offset 0) with the nodes its pods could run on.
func (b *Builder) Placement(nodes ...timeline.NodeZone) *Builder {
	return b.Entry(timeline.Entry{Kind: timeline.KindWorkload, Workload: &timeline.WorkloadSpec{
		Kind: "Deployment", Name: "target", Container: Container, Nodes: nodes}})
}

// LastSeq is the Seq of the entry added last.
func (b *Builder) LastSeq() int64 { return b.seq }

func (b *Builder) endpoint(t time.Duration, pod string, to *timeline.EndpointState) {
	from := b.eps[pod]
	change := timeline.EndpointChanged
	switch {
	case from == nil && to == nil:
		return
	case from == nil:
		change = timeline.EndpointAdded
	case to == nil:
		change = timeline.EndpointRemoved
	}
	node := b.nodes[pod]
	if node == "" {
		node = "probegate-control-plane"
	}
	b.Entry(timeline.Entry{T: t, Kind: timeline.KindEndpoint, Pod: pod, Endpoint: &timeline.EndpointTransition{
		Change: change, Slice: "target-abcde", Address: address(pod), Node: node, From: from, To: to,
	}})
	b.eps[pod] = to
}

func address(pod string) string {
	h := 0
	for _, c := range pod {
		h = h*31 + int(c)
	}
	return fmt.Sprintf("10.244.0.%d", 2+h%250)
}

// Ready marks the pods' endpoints ready (adding them if new).
func (b *Builder) Ready(t time.Duration, pods ...string) *Builder {
	for _, p := range pods {
		b.endpoint(t, p, &timeline.EndpointState{Ready: true, Serving: true})
	}
	return b
}

// NotReady marks the pods' endpoints ready=false (readiness withdrawal).
func (b *Builder) NotReady(t time.Duration, pods ...string) *Builder {
	for _, p := range pods {
		b.endpoint(t, p, &timeline.EndpointState{Ready: false, Serving: false})
	}
	return b
}

// Terminating marks the pods' endpoints ready=false, serving=true, terminating=true.
func (b *Builder) Terminating(t time.Duration, pods ...string) *Builder {
	for _, p := range pods {
		b.endpoint(t, p, &timeline.EndpointState{Ready: false, Serving: true, Terminating: true})
	}
	return b
}

// Removed removes the pods' endpoints.
func (b *Builder) Removed(t time.Duration, pods ...string) *Builder {
	for _, p := range pods {
		b.endpoint(t, p, nil)
	}
	return b
}

func (b *Builder) pod(t time.Duration, pod string, c timeline.PodTransition) *Builder {
	return b.Entry(timeline.Entry{T: t, Kind: timeline.KindPod, Pod: pod, PodChange: &c})
}

// Created records the pod's creation.
func (b *Builder) Created(t time.Duration, pod string) *Builder {
	return b.pod(t, pod, timeline.PodTransition{Field: "created", To: "Pending"})
}

// ContainerReady records the pod's container becoming ready.
func (b *Builder) ContainerReady(t time.Duration, pod string) *Builder {
	return b.pod(t, pod, timeline.PodTransition{Field: "container/" + Container + "/ready", From: "false", To: "true"})
}

// Started records the pod's container passing its startup probe (started=true).
func (b *Builder) Started(t time.Duration, pod string) *Builder {
	return b.pod(t, pod, timeline.PodTransition{Field: "container/" + Container + "/started", From: "false", To: "true"})
}

// Deleting records the pod's deletion request with its grace period.
func (b *Builder) Deleting(t time.Duration, pod string, grace time.Duration) *Builder {
	g := int64(grace / time.Second)
	return b.pod(t, pod, timeline.PodTransition{Field: "deleting", To: "true", GracePeriodSeconds: &g})
}

// DeletingSeen records the pod's deletion made at made (the API's time, truncated to the second)
// and delivered by the watch only at t.
func (b *Builder) DeletingSeen(t, made time.Duration, pod string, grace time.Duration) *Builder {
	return b.Deleting(t, pod, grace).apiTime(t, made)
}

// apiTime stamps the entry added last as seen at t and, by the API, at api truncated to the
// second (as the API's timestamps are).
func (b *Builder) apiTime(t, api time.Duration) *Builder {
	e := &b.entries[len(b.entries)-1]
	e.At = Start.Add(t)
	at := Start.Add(api).Truncate(time.Second)
	e.APITime = &at
	return b
}

// Exited records the pod's container terminating with exitCode, as the pod observer writes it.
func (b *Builder) Exited(t time.Duration, pod string, exitCode int32) *Builder {
	reason := "Completed"
	if exitCode != 0 {
		reason = "Error"
	}
	return b.pod(t, pod, timeline.PodTransition{Field: "container/" + Container + "/state", From: "running",
		To: fmt.Sprintf("terminated:%s:%d", reason, exitCode)})
}

// ExitedContainer records container (of several in the pod) terminating with exitCode.
func (b *Builder) ExitedContainer(t time.Duration, pod, container string, exitCode int32) *Builder {
	reason := "Completed"
	if exitCode != 0 {
		reason = "Error"
	}
	return b.pod(t, pod, timeline.PodTransition{Field: "container/" + container + "/state", From: "running",
		To: fmt.Sprintf("terminated:%s:%d", reason, exitCode)})
}

// ContainerReadyOf records container (of several in the pod) becoming ready.
func (b *Builder) ContainerReadyOf(t time.Duration, pod, container string) *Builder {
	return b.pod(t, pod, timeline.PodTransition{Field: "container/" + container + "/ready", From: "false", To: "true"})
}

// Killing records the kubelet's Killing event for the pod's container: it began stopping it
// (preStop hook, then SIGTERM).
func (b *Builder) Killing(t time.Duration, pod string) *Builder {
	return b.Entry(timeline.Entry{T: t, Kind: timeline.KindEvent, Pod: pod,
		Event: &timeline.Event{Reason: "Killing", Message: "Stopping container " + Container}})
}

// Recovered marks the entry added last as reconstructed from a relist after a watch gap.
func (b *Builder) Recovered() *Builder {
	b.entries[len(b.entries)-1].Recovered = true
	return b
}

// ExitedReported records the pod's container seen terminated at t, its status reporting it
// finished at finished (truncated to the second, as the API does).
func (b *Builder) ExitedReported(t, finished time.Duration, pod string, exitCode int32) *Builder {
	return b.Exited(t, pod, exitCode).apiTime(t, finished)
}

// Deleted records the pod object going away.
func (b *Builder) Deleted(t time.Duration, pod string) *Builder {
	return b.pod(t, pod, timeline.PodTransition{Field: "deleted", From: "Running"})
}

// Restart records a rise of the pod's restartCount with the given cause.
func (b *Builder) Restart(t time.Duration, pod string, cause timeline.RestartCause) *Builder {
	b.restarts[pod]++
	code := int32(137)
	if cause == timeline.CauseAppExit {
		code = 1
	}
	return b.Entry(timeline.Entry{T: t, Kind: timeline.KindRestart, Pod: pod, Restart: &timeline.ContainerRestart{
		Container: Container, RestartCount: b.restarts[pod], Reason: "Error", ExitCode: code, Cause: cause,
		Evidence: "verdicttest: " + string(cause),
	}})
}

// ProbeFailed records a kubelet Unhealthy event for the pod's probe of the given kind.
func (b *Builder) ProbeFailed(t time.Duration, pod, probe, message string) *Builder {
	return b.Entry(timeline.Entry{T: t, Kind: timeline.KindProbe, Pod: pod, Probe: &timeline.ProbeFailure{
		Probe: probe, Container: Container, Message: message, Count: 1,
	}})
}

func (b *Builder) fault(t time.Duration, action, name, typ string, pod string, detail string) *Builder {
	return b.Entry(timeline.Entry{T: t, Kind: timeline.KindFault, Pod: pod, Fault: &timeline.FaultAction{
		Type: typ, Name: name, Action: action, Target: pod, Detail: detail,
	}})
}

// Inject records a fault of type typ (named after it) injected on pod ("" for a shared fault such
// as database slowness), with its effect confirmed at the same instant.
func (b *Builder) Inject(t time.Duration, typ, pod string) *Builder {
	return b.InjectUnproven(t, typ, pod).Observe(t, typ, pod, timeline.EffectConfirmed)
}

// InjectUnproven records a fault injected with no proof of its effect (add one with Observe).
func (b *Builder) InjectUnproven(t time.Duration, typ, pod string) *Builder {
	return b.fault(t, timeline.FaultInject, typ, typ, pod, "")
}

// Observe records the fault named typ's proof of effect while it acts: effect is
// timeline.EffectConfirmed or timeline.EffectNotObserved.
func (b *Builder) Observe(t time.Duration, typ, pod, effect string) *Builder {
	b.fault(t, timeline.FaultObserve, typ, typ, pod, "verdicttest: "+effect)
	b.entries[len(b.entries)-1].Fault.Params = map[string]string{timeline.ParamEffect: effect, timeline.ParamPhase: timeline.PhaseDuring}
	return b
}

// Unrouted records kube-proxy's rules no longer routing new connections to pod at t (the routing
// watch read them at t; the change came after since).
func (b *Builder) Unrouted(since, t time.Duration, pod string) *Builder {
	return b.Entry(timeline.Entry{T: t, Kind: timeline.KindRouting, Pod: pod,
		Routing: &timeline.RoutingChange{Address: address(pod), Routed: false, Since: since}})
}

// UnroutedOn is Unrouted as read on node, a node the host load does not enter through.
func (b *Builder) UnroutedOn(since, t time.Duration, pod, node string) *Builder {
	return b.Entry(timeline.Entry{T: t, Kind: timeline.KindRouting, Pod: pod,
		Routing: &timeline.RoutingChange{Address: address(pod), Routed: false, Since: since, Node: node}})
}

// WatchGap records an observer's watch-gap mark at t.
func (b *Builder) WatchGap(t time.Duration, detail string) *Builder {
	return b.Entry(timeline.Entry{T: t, Kind: timeline.KindMark, Mark: &timeline.Mark{Name: timeline.MarkWatchGap, Detail: detail}})
}

// Capacity records a capacity search before the load that held rps (saturated: a higher rate was
// missed by the target).
func (b *Builder) Capacity(t time.Duration, rps float64, saturated bool) *Builder {
	return b.Entry(timeline.Entry{T: t, Kind: timeline.KindCapacity, Capacity: &timeline.CapacitySearch{Rate: rps, Saturated: saturated}})
}

// Revert records the revert of the fault named typ.
func (b *Builder) Revert(t time.Duration, typ, pod string) *Builder {
	return b.fault(t, timeline.FaultRevert, typ, typ, pod, "")
}

// Skip records a fault the target could not take.
func (b *Builder) Skip(t time.Duration, typ, note string) *Builder {
	return b.fault(t, timeline.FaultSkip, typ, typ, "", note)
}

// Request adds one request; status 0 with an error class makes a transport failure.
func (b *Builder) Request(t time.Duration, pod string, status int, class timeline.ErrorClass, reused bool) *Builder {
	b.rseq++
	b.requests = append(b.requests, timeline.Request{
		Seq: b.rseq, T: t, Start: Start.Add(t), Latency: 5 * time.Millisecond, Status: status, Error: class, Pod: pod, Reused: reused,
	})
	return b
}

// Took sets the latency of the request added last: from its start to its response or error.
func (b *Builder) Took(d time.Duration) *Builder {
	b.requests[len(b.requests)-1].Latency = d
	return b
}

// From sets the source (an in-cluster load agent, pod@node) of the request added last.
func (b *Builder) From(source string) *Builder {
	b.requests[len(b.requests)-1].Source = source
	return b
}

// Reused adds one request pod served on the kept-alive connection conn (a client address).
func (b *Builder) Reused(t time.Duration, pod, conn string) *Builder {
	b.Request(t, pod, 200, "", true)
	b.requests[len(b.requests)-1].Conn = conn
	return b
}

// GRPC makes the request added last a gRPC call that ended with status code (OK, UNAVAILABLE, …):
// it has no HTTP status.
func (b *Builder) GRPC(code string) *Builder {
	q := &b.requests[len(b.requests)-1]
	q.GRPC, q.Status = code, 0
	return b
}

// Resent adds one request that succeeded from pod only after the client resent it (its first attempt
// was cut on a kept-alive connection).
func (b *Builder) Resent(t time.Duration, pod string) *Builder {
	b.Request(t, pod, 200, "", false)
	b.requests[len(b.requests)-1].Retried = true
	return b
}

// Via marks the request added last as sent through a front door that keeps its own record (an
// ingress controller), which names the pod address it sent it to.
func (b *Builder) Via(upstream string) *Builder {
	b.requests[len(b.requests)-1].Upstream = upstream
	return b
}

// Opened dates the connection of the request added last: opened at t (on the timeline), not reused.
func (b *Builder) Opened(t time.Duration) *Builder {
	q := &b.requests[len(b.requests)-1]
	q.ConnAt, q.Reused = Start.Add(t), false
	return b
}

// Flowed marks the request added last as traced by the node's conntrack: its connection's NEW flow
// reported a millisecond after the connection opened (the request's start when not dated), DNAT'd
// to its pod, which conntrack named (not the header).
func (b *Builder) Flowed() *Builder {
	q := &b.requests[len(b.requests)-1]
	at := q.ConnAt
	if at.IsZero() {
		at = q.Start
	}
	q.FlowAt, q.PodFrom = at.Add(time.Millisecond), timeline.PodFromConntrack
	return b
}

// OK adds one successful request served by pod.
func (b *Builder) OK(t time.Duration, pod string) *Builder { return b.Request(t, pod, 200, "", false) }

// Traffic adds rate requests per second in [from, to), served round-robin by the ready pods at each
// request's start; with none ready the request is refused.
func (b *Builder) Traffic(from, to time.Duration, rate int) *Builder {
	b.traffic = append(b.traffic, traffic{from, to, rate})
	return b
}

// Entries returns the entries sorted by T (then Seq).
func (b *Builder) Entries() []timeline.Entry {
	out := append([]timeline.Entry(nil), b.entries...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].T != out[j].T {
			return out[i].T < out[j].T
		}
		return out[i].Seq < out[j].Seq
	})
	return out
}

// Requests returns the explicit requests plus the generated traffic, sorted by T.
func (b *Builder) Requests() []timeline.Request {
	out := append([]timeline.Request(nil), b.requests...)
	entries := b.Entries()
	seq := b.rseq
	for _, tr := range b.traffic {
		n := int64(tr.to-tr.from) * int64(tr.rate) / int64(time.Second)
		turn := 0
		for i := int64(0); i < n; i++ {
			t := tr.from + time.Duration(i*int64(time.Second)/int64(tr.rate))
			ready := readyAt(entries, t)
			seq++
			q := timeline.Request{Seq: seq, T: t, Start: Start.Add(t), Latency: 5 * time.Millisecond}
			if len(ready) == 0 {
				q.Error, q.Detail = timeline.ErrRefused, "connection refused"
			} else {
				q.Status, q.Pod, q.Bytes = 200, ready[turn%len(ready)], 64
				turn++
			}
			out = append(out, q)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].T < out[j].T })
	return out
}

// readyAt is the sorted pods whose endpoint is ready at t.
func readyAt(entries []timeline.Entry, t time.Duration) []string {
	state := map[string]bool{}
	for _, e := range entries {
		if e.T > t {
			break
		}
		if e.Kind == timeline.KindEndpoint && e.Endpoint != nil {
			to := e.Endpoint.To
			state[e.Pod] = to != nil && to.Ready
		}
	}
	var out []string
	for p, ok := range state {
		if ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Input returns the run as a verdict.Input.
func (b *Builder) Input() verdict.Input {
	return verdict.Input{Entries: b.Entries(), Requests: b.Requests(), Oracle: b.oracle, Faults: b.faults, Load: b.load}
}

// Timeline returns the entries as a timeline.Timeline (Seq renumbered in time order).
func (b *Builder) Timeline() *timeline.Timeline {
	tl := timeline.New(Start)
	for _, e := range b.Entries() {
		e.Seq = 0
		tl.Append(e)
	}
	return tl
}
