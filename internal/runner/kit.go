package runner

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/seed"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
)

// Kit is every capability a run needs, each behind a small interface so the schedule can be tested
// with fakes. NewKit (wire.go) fills it with the real packages.
type Kit struct {
	Deployer  Deployer
	Observers ObserverStarter
	Load      LoadStarter
	Faults    FaultBuilder
	Judge     Judge
	// NodeExec runs a command in the cluster's node container (freeze), when the cluster is kind.
	NodeExec func(ctx context.Context, args ...string) ([]byte, error)
}

// InstallRequest says what to deploy into a namespace.
type InstallRequest struct {
	Namespace string
	Variant   string
	// Custom, when set, replaces the bundled fixture (a --target file).
	Custom   *scenario.TargetSpec
	Replicas int
	// Bootstrap overrides the target's simulated bootstrap time when non-zero.
	Bootstrap time.Duration
	// Slot is the cluster port slot this run owns (target and toxiproxy NodePorts).
	Slot int
	// Patch, when set, is a strategic-merge patch of the workload under test applied before it is
	// installed (tune --verify's recommended settings).
	Patch []byte
}

// Target is what was deployed and how to reach it.
type Target struct {
	Namespace  string
	Deployment string
	// WorkloadKind and WorkloadName name the workload under test when it is not the Deployment
	// (a user's StatefulSet); empty means the Deployment.
	WorkloadKind, WorkloadName string
	Service                    string
	Container                  string
	// Selector is the label selector of the target's pods ("app=target").
	Selector string
	// URL is the target's base URL on a 127.0.0.1 port published by the cluster.
	URL string
	// ToxiproxyURL is the toxiproxy API on loopback and DBProxy the proxy in front of the database;
	// both empty when the target has no toxiproxy in front of its dependency.
	ToxiproxyURL string
	DBProxy      string
	// Proxies are a user's app's dependencies by name (nil for the fixture); ToxiproxySelector
	// finds the interposed toxiproxy's pod.
	Proxies           map[string]faults.Proxy
	ToxiproxySelector string
	// AdminPort is the target's admin port inside the pod (stall), 0 when it has none; StallPath
	// the stall endpoint on it (the fixture's when empty).
	AdminPort int
	StallPath string
	// Description names the target for reports ("fixture good", "image x:1").
	Description string
	// Cleanup, when set, undoes what Install created outside the run's own namespace.
	Cleanup func(ctx context.Context) error
}

// Deployer installs the target and its dependencies into a fresh namespace and waits until ready.
type Deployer interface {
	Install(ctx context.Context, c *cluster.Conn, req InstallRequest) (*Target, error)
}

// Preflighter is implemented by deployers that can check, before anything is created, that
// everything they will deploy is available (images built and loaded, manifests valid).
type Preflighter interface {
	Preflight(ctx context.Context, c *cluster.Conn, variants []string, custom *scenario.TargetSpec) error
}

// ObserverStarter starts the namespace's watchers writing to tl and returns once they have synced.
type ObserverStarter interface {
	Start(ctx context.Context, c *cluster.Conn, t *Target, tl *timeline.Timeline) (Observation, error)
}

// Observation is a running set of watchers.
type Observation interface {
	// ReadyEndpoints is the number of ready endpoints of the target Service now.
	ReadyEndpoints() int
	// Stop ends the watchers; it is safe to call more than once.
	Stop()
}

// LoadSpec is the load of one scenario.
type LoadSpec struct {
	URL       string
	Rate      int
	Duration  time.Duration
	KeepAlive bool
	Timeout   time.Duration
	// PodHeader is the response header naming the serving pod ("" for the fixture's).
	PodHeader string
	// IgnorePodHeader and AllowHost: see loadgen.Config (conntrack attribution, attribution.go).
	IgnorePodHeader bool
	AllowHost       string
}

// LoadStarter starts constant-rate load recording every request on tl.
type LoadStarter interface {
	Start(ctx context.Context, spec LoadSpec, tl *timeline.Timeline) (LoadRun, error)
}

// LoadRun is load in progress.
type LoadRun interface {
	// SetRate changes the rate (overload) and returns the previous one.
	SetRate(rate float64) float64
	// Wait blocks until the load ends (duration reached or Stop) and returns every request.
	Wait() ([]timeline.Request, error)
	// Stop ends the load early; it is safe to call more than once.
	Stop()
}

// FaultEnv is what building a fault instance may use.
type FaultEnv struct {
	// Index is the fault's position in the scenario; its timeline name is "faults[Index]".
	Index    int
	Conn     *cluster.Conn
	Target   *Target
	Timeline *timeline.Timeline
	// Rand is the fault's own seeded stream (which pod, when).
	Rand     *seed.Source
	Load     LoadRun
	NodeExec func(ctx context.Context, args ...string) ([]byte, error)
}

// FaultBuilder builds the fault instance of a scenario's fault. It returns skip != "" (and no
// fault) when the target cannot take the fault (no admin endpoint, no toxiproxy): the runner
// records a FaultAction skip with that note.
type FaultBuilder interface {
	Build(f scenario.Fault, env FaultEnv) (inj faults.Fault, skip string, err error)
}

// JudgeInput is everything verdict rules may read.
type JudgeInput struct {
	Scenario *scenario.Scenario
	Entries  []timeline.Entry
	Requests []timeline.Request
	// Pod is the live target pod the oracle was computed from.
	Pod *corev1.Pod
	// LoadStart is the timeline offset at which the load (and the fault schedule) started.
	LoadStart time.Duration
	LoadEnd   time.Duration
}

// Judge computes the timing oracle from the live pod and evaluates the scenario's expectations,
// returning the oracle and one result per expectation, in order (each result places the windows
// it judged against on the timeline). An error is a harness error, not a failed verdict.
type Judge interface {
	Judge(in JudgeInput) (*oracle.Oracle, []verdict.Result, error)
}
