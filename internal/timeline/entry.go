// Package timeline is probegate's single record of a run: every EndpointSlice transition, pod
// change, container restart, probe failure, fault action and per-second load window, each stamped
// with the harness's own receive time (monotonic-safe, sub-millisecond) and, where the API gave
// one, the API's timestamp (one-second resolution) beside it. Verdicts and reports read only this.
package timeline

import (
	"encoding/json"
	"time"
)

// Kind names the type of a timeline entry; exactly one detail field of Entry is set per kind.
type Kind string

// Entry kinds.
const (
	KindEndpoint Kind = "endpoint" // Endpoint: an EndpointSlice endpoint appeared, changed or went away
	KindPod      Kind = "pod"      // Pod: a pod phase, condition, container state or deletion change
	KindRestart  Kind = "restart"  // Restart: a container's restartCount rose
	KindProbe    Kind = "probe"    // Probe: an Unhealthy event (probe failure), explanation only
	KindEvent    Kind = "event"    // Event: any other Kubernetes event worth keeping
	KindRollout  Kind = "rollout"  // Rollout: Deployment replica counts changed
	KindFault    Kind = "fault"    // Fault: the harness injected, observed or reverted a fault
	KindLoad     Kind = "load"     // Load: one second of load-generator results
	KindMark     Kind = "mark"     // Mark: a scenario phase boundary (start, load on, end ...)
	KindWorkload Kind = "workload" // Workload: the workload under test and its probe and shutdown settings
	KindRouting  Kind = "routing"  // Routing: kube-proxy started or stopped routing new connections to a backend
	// ProbeLatency: how long one container's probes of one kind took, as kubelet counted them (read once,
	// at the run's end: the counts cover the pod's life).
	KindProbeLatency Kind = "probe-latency"
	// Host: one interval of the machine the harness shares with a local cluster (CPU pressure).
	KindHost Kind = "host"
	// Capacity: the target's capacity as a step search measured it before the load.
	KindCapacity Kind = "capacity"
)

// Entry is one thing that happened. T is the offset from the timeline's start measured on the
// harness's monotonic clock; At is the same instant on the wall clock; APITime is the time the
// Kubernetes API reported for it, when there is one.
type Entry struct {
	Seq     int64         `json:"seq"`
	T       time.Duration `json:"t"`
	At      time.Time     `json:"at"`
	APITime *time.Time    `json:"apiTime,omitempty"`
	Kind    Kind          `json:"kind"`
	// Pod is the pod the entry is about, when it is about one.
	Pod string `json:"pod,omitempty"`
	// Recovered marks an entry reconstructed from a relist after a watch gap: the change happened
	// during the gap, so its time is only known to lie between the gap's start and T.
	Recovered bool `json:"recovered,omitempty"`

	Endpoint  *EndpointTransition `json:"endpoint,omitempty"`
	PodChange *PodTransition      `json:"podChange,omitempty"`
	Restart   *ContainerRestart   `json:"restart,omitempty"`
	Probe     *ProbeFailure       `json:"probe,omitempty"`
	Event     *Event              `json:"event,omitempty"`
	Rollout   *RolloutProgress    `json:"rollout,omitempty"`
	Fault     *FaultAction        `json:"fault,omitempty"`
	Load      *LoadWindow         `json:"load,omitempty"`
	Mark      *Mark               `json:"mark,omitempty"`
	Workload  *WorkloadSpec       `json:"workload,omitempty"`
	Routing   *RoutingChange      `json:"routing,omitempty"`
	Latency   *ProbeLatency       `json:"latency,omitempty"`
	Host      *HostSample         `json:"host,omitempty"`
	Capacity  *CapacitySearch     `json:"capacity,omitempty"`
}

// CapacitySearch is the target's capacity on the scenario's own request, measured by a step search
// before the load (outside every fault): Rate is the highest rate held. Saturated says a higher
// rate was missed by the target; when false Rate is only a lower bound (the search stopped at the
// harness's own limit, HarnessLimit when it fell behind, or at its budget or cap first).
type CapacitySearch struct {
	Rate         float64 `json:"rate"`
	Saturated    bool    `json:"saturated"`
	HarnessLimit float64 `json:"harnessLimit,omitempty"`
}

// HostSample is one interval on the machine that runs the harness and a local cluster's nodes
// (their kubelets, kube-proxies and pods): the share of it in which some runnable task waited for a
// CPU (Linux pressure stall information, "some"), and the runnable tasks per CPU at its end. On a
// starved host probes, kube-proxy and the harness itself run late, whatever the target does.
type HostSample struct {
	Interval   time.Duration `json:"interval"`
	CPUWaiting float64       `json:"cpuWaiting"` // 0..1
	Runnable   int           `json:"runnable"`
	CPUs       int           `json:"cpus"`
}

// ProbeLatency is kubelet's histogram of one container's probe durations of one kind
// (prober_probe_duration_seconds): cumulative counts of probes that took at most each bound.
type ProbeLatency struct {
	Probe     string          `json:"probe"` // readiness, liveness or startup
	Container string          `json:"container"`
	Buckets   []LatencyBucket `json:"buckets"`
}

// LatencyBucket counts the probes that took at most Le seconds (as kubelet prints it: "0.25",
// "+Inf").
type LatencyBucket struct {
	Le    string `json:"le"`
	Count int64  `json:"count"`
}

// RoutingChange is kube-proxy's routing of the target Service's new connections to one backend
// address, read from the node's rules: it changed after Since (the last read that showed the old
// state, as an offset like T) and no later than T. Pod names the pod that had the address then.
type RoutingChange struct {
	Address string        `json:"address"`
	Routed  bool          `json:"routed"`
	Since   time.Duration `json:"since"`
	// Node is the node whose kube-proxy it is; Ingress marks the node the host load enters through
	// (the one "after withdrawal" verdicts time against). An entry without a node is the ingress's.
	Node    string `json:"node,omitempty"`
	Ingress bool   `json:"ingress,omitempty"`
}

// AtIngress reports whether the change is the ingress node's (entries without a node are).
func (c RoutingChange) AtIngress() bool { return c.Ingress || c.Node == "" }

// EndpointState is one endpoint's conditions with the API's nil defaults already applied
// (nil ready and serving mean true, nil terminating means false).
type EndpointState struct {
	Ready       bool `json:"ready"`
	Serving     bool `json:"serving"`
	Terminating bool `json:"terminating"`
}

// Endpoint changes.
const (
	EndpointAdded   = "added"
	EndpointChanged = "changed"
	EndpointRemoved = "removed"
)

// EndpointTransition is a change of one endpoint of the target Service's EndpointSlices.
// From is nil when the endpoint appeared; To is nil when it was removed.
type EndpointTransition struct {
	Change  string         `json:"change"`
	Slice   string         `json:"slice"`
	Address string         `json:"address"`
	Node    string         `json:"node,omitempty"`
	Zone    string         `json:"zone,omitempty"` // the node's topology.kubernetes.io/zone, as the slice says
	From    *EndpointState `json:"from,omitempty"`
	To      *EndpointState `json:"to,omitempty"`
}

// PodTransition is one observed change of a pod. Field names what changed: "created", "phase",
// "condition/<Type>", "container/<name>/started", "container/<name>/ready", "container/<name>/state",
// "deleting" (deletionTimestamp set; Detail holds the grace period) or "deleted".
type PodTransition struct {
	Field  string `json:"field"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	Detail string `json:"detail,omitempty"`
	// GracePeriodSeconds is set on "deleting".
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
}

// RestartCause says why a container restarted.
type RestartCause string

// Restart causes, as attributed from pod status, events and the harness's own fault actions.
const (
	CauseLiveness RestartCause = "liveness" // killed by kubelet after a failed liveness probe
	CauseStartup  RestartCause = "startup"  // killed by kubelet after a failed startup probe
	CauseOOM      RestartCause = "oom"      // OOMKilled
	CauseAppExit  RestartCause = "app-exit" // the process exited by itself (ExitCode says how)
	CauseEviction RestartCause = "eviction" // evicted (Eviction API or node pressure)
	CauseDeletion RestartCause = "deletion" // pod deleted or replaced by a rollout
	CauseUnknown  RestartCause = "unknown"  // not enough evidence
)

// ContainerRestart is a rise of a container's restartCount, with the last termination's facts and
// the attributed cause. Evidence explains the attribution in one line.
type ContainerRestart struct {
	Container    string       `json:"container"`
	RestartCount int32        `json:"restartCount"`
	Reason       string       `json:"reason,omitempty"`
	ExitCode     int32        `json:"exitCode"`
	FinishedAt   *time.Time   `json:"finishedAt,omitempty"`
	Cause        RestartCause `json:"cause"`
	Evidence     string       `json:"evidence,omitempty"`
}

// Probe kinds.
const (
	ProbeLiveness  = "liveness"
	ProbeReadiness = "readiness"
	ProbeStartup   = "startup"
)

// ProbeFailure is a kubelet Unhealthy event. Events are aggregated and rate-limited: treat them as
// explanation, never as the only evidence.
type ProbeFailure struct {
	Probe     string `json:"probe"`
	Container string `json:"container,omitempty"`
	Message   string `json:"message"`
	Count     int32  `json:"count"`
}

// Event is any other Kubernetes event kept on the timeline (Killing, BackOff, Started, Evicted ...).
type Event struct {
	Reason  string `json:"reason"`
	Type    string `json:"type,omitempty"`
	Object  string `json:"object"`
	Message string `json:"message"`
	Count   int32  `json:"count"`
}

// RolloutProgress is a Deployment's replica counts after a change.
type RolloutProgress struct {
	Deployment  string `json:"deployment"`
	Generation  int64  `json:"generation"`
	Replicas    int32  `json:"replicas"`
	Updated     int32  `json:"updated"`
	Ready       int32  `json:"ready"`
	Available   int32  `json:"available"`
	Unavailable int32  `json:"unavailable"`
}

// Fault actions.
const (
	FaultInject  = "inject"
	FaultObserve = "observe" // proof of effect measured while the fault was active
	FaultRevert  = "revert"
	FaultSkip    = "skip" // not applicable to this target; Detail says why
)

// Proof of effect. An observe action carries Params[ParamEffect] (EffectConfirmed or
// EffectNotObserved) and Params[ParamPhase]: PhaseDuring proves the fault acted, PhaseAfter that its
// revert took (a one-shot fault's proof has no phase and counts as during).
const (
	ParamEffect       = "effect"
	EffectConfirmed   = "confirmed"
	EffectNotObserved = "not-observed"
	ParamPhase        = "phase"
	PhaseDuring       = "during"
	PhaseAfter        = "after"
)

// FaultAction is something the harness did to the target or its dependencies.
type FaultAction struct {
	Type   string            `json:"type"`
	Name   string            `json:"name,omitempty"`
	Action string            `json:"action"`
	Target string            `json:"target,omitempty"`
	Detail string            `json:"detail,omitempty"`
	Params map[string]string `json:"params,omitempty"`
}

// LoadWindow summarises one second of load. Second counts from the start of the load.
type LoadWindow struct {
	Second       int            `json:"second"`
	Sent         int            `json:"sent"`
	OK           int            `json:"ok"`
	Failed       int            `json:"failed"`
	Rate         float64        `json:"rate"`
	SuccessRatio float64        `json:"successRatio"`
	P50          time.Duration  `json:"p50"`
	P99          time.Duration  `json:"p99"`
	ByPod        map[string]int `json:"byPod,omitempty"`
	Errors       map[string]int `json:"errors,omitempty"`
}

// Mark is a scenario phase boundary.
type Mark struct {
	Name   string `json:"name"`
	Detail string `json:"detail,omitempty"`
}

// WorkloadSpec is the workload under test as it was deployed: its kind and name, the container
// whose probes are judged, and that container's probe and shutdown settings as the live pod had
// them. PodSpec is a core/v1 PodSpec in JSON holding only terminationGracePeriodSeconds and this
// container's name, probes and lifecycle (never env, images or volumes); Annotations are the pod's
// probegate.dev/ annotations. It is recorded once, after deploy, for readers such as tune.
type WorkloadSpec struct {
	Kind        string            `json:"kind"`
	Name        string            `json:"name"`
	Container   string            `json:"container"`
	PodSpec     json.RawMessage   `json:"podSpec,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// Nodes are the nodes the workload's pods could be scheduled on when the run started (not
	// cordoned, every NoSchedule and NoExecute taint tolerated), with their zones.
	Nodes []NodeZone `json:"nodes,omitempty"`
	// Replicas is the workload's desired replica count and RolloutUnavailable how many of them its
	// rolling update may take out of service at once (maxUnavailable, resolved against Replicas);
	// nil when not known.
	Replicas           *int `json:"replicas,omitempty"`
	RolloutUnavailable *int `json:"rolloutUnavailable,omitempty"`
}

// NodeZone is a node and its topology.kubernetes.io/zone label ("" when it has none).
type NodeZone struct {
	Node string `json:"node"`
	Zone string `json:"zone,omitempty"`
}

// HostStretch sums the host samples that overlap a stretch of the run.
type HostStretch struct {
	Observed time.Duration // the samples' total length
	Waiting  float64       // share of Observed in which some task waited for a CPU
	Worst    float64       // the largest share of one sample
	Runnable int           // the most runnable tasks at a sample
	CPUs     int
}

// HostOver sums the host samples overlapping (from, to); a sample covers [T − Interval, T]. Its
// Observed is 0 when there are none (a remote cluster).
func HostOver(entries []Entry, from, to time.Duration) HostStretch {
	var h HostStretch
	var waited time.Duration
	for _, e := range entries {
		if e.Kind != KindHost || e.Host == nil || e.T <= from || e.T-e.Host.Interval >= to {
			continue
		}
		h.Observed += e.Host.Interval
		waited += time.Duration(e.Host.CPUWaiting * float64(e.Host.Interval))
		h.Worst = max(h.Worst, e.Host.CPUWaiting)
		h.Runnable, h.CPUs = max(h.Runnable, e.Host.Runnable), e.Host.CPUs
	}
	if h.Observed > 0 {
		h.Waiting = float64(waited) / float64(h.Observed)
	}
	return h
}
