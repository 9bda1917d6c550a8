package runner

import (
	"context"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/seed"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// kit is every capability a run needs, each behind a small interface so the schedule can be tested
// with fakes. newKit (wire.go) fills it with the real packages; the deployers live in deploy.
type kit struct {
	deployer  deploy.Deployer
	observers observerStarter
	load      loadStarter
	faults    faultBuilder // the fault registry when nil; runner tests set fakes
	judge     judger
	// nodeExec runs a command in the ingress node's container (the kind control plane, where the
	// host load enters: conntrack, routing), and nodeExecOn in a named node's (freeze, on the pod's
	// node), when the cluster is kind.
	nodeExec   func(ctx context.Context, args ...string) ([]byte, error)
	nodeExecOn func(ctx context.Context, node string, args ...string) ([]byte, error)
	// pauseNode freezes or resumes a whole node (node-loss), when the cluster is kind.
	pauseNode func(ctx context.Context, node string, pause bool) error
	// ingressNode is the Node whose published ports the host load goes through.
	ingressNode string
}

// observerStarter starts the namespace's watchers writing to tl and returns once they have synced.
type observerStarter interface {
	Start(ctx context.Context, c *cluster.Conn, t *deploy.Target, tl *timeline.Timeline) (observation, error)
}

// observation is a running set of watchers.
type observation interface {
	// ReadyEndpoints is the number of ready endpoints of the target Service now.
	ReadyEndpoints() int
	// Stop ends the watchers; it is safe to call more than once.
	Stop()
}

// loadSpec is the load of one scenario.
type loadSpec struct {
	// URL is the target's base URL and the request path; a gRPC load dials its host:port.
	URL string
	// Protocol is the target's (scenario.LoadHTTP when empty); GRPC its call when it is gRPC.
	Protocol string
	GRPC     *scenario.GRPCCall
	// Namespace, Service and Path say where in-cluster load goes: the target's Service, on Path.
	Namespace, Service, Path string
	Rate                     int
	Duration                 time.Duration
	KeepAlive                bool
	Timeout                  time.Duration
	Clients                  int // independent connection pools taking requests in turn (scenario.Load.Clients)
	// PodHeader is the response header naming the serving pod ("" for the fixture's).
	PodHeader string
	// IgnorePodHeader and AllowHost: see loadgen.Config (conntrack attribution, attribution.go).
	IgnorePodHeader bool
	AllowHost       string
	// MaxWorkers caps the host load's concurrent requests (0: unbounded; see loadgen.Config).
	MaxWorkers uint64
	// Header is sent with every HTTP request (a front door's Host and load id: frontdoor.go).
	Header http.Header
}

// loadStarter starts constant-rate load recording every request on tl.
type loadStarter interface {
	Start(ctx context.Context, spec loadSpec, tl *timeline.Timeline) (loadRun, error)
}

// loadRun is load in progress.
type loadRun interface {
	// SetRate changes the rate (overload) and returns the previous one.
	SetRate(rate float64) float64
	// Wait blocks until the load ends (duration reached or Stop) and returns every request.
	Wait() ([]timeline.Request, error)
	// Stop ends the load early; it is safe to call more than once.
	Stop()
}

// connectionRun is a load that holds long-lived connections (gRPC's) and lists them once it has
// ended, for the report's pods per connection.
type connectionRun interface {
	Connections() []reports.Connection
}

// faultEnv is what building a fault instance may use.
type faultEnv struct {
	// Index is the fault's position in the scenario; its timeline name is "faults[Index]".
	Index    int
	Conn     *cluster.Conn
	Target   *deploy.Target
	Timeline *timeline.Timeline
	// Rand is the fault's own seeded stream (which pod, when).
	Rand *seed.Source
	Load loadRun
	// NodeProcs reaches the processes on the nodes (the kind node containers, or the node agents);
	// nil when the scenario has neither.
	NodeProcs faults.NodeProcs
	// PauseNode stops or resumes a node (PauseHow says how); nil when there is no way to.
	PauseNode func(ctx context.Context, node string, pause bool) error
	PauseHow  string
	// SchedulableNodes is how many nodes take pods (see cluster.SchedulableNodes).
	SchedulableNodes int
}

// faultBuilder builds the fault instance of a scenario's fault. It returns skip != "" (and no
// fault) when the target cannot take the fault (no admin endpoint, no toxiproxy): the runner
// records a FaultAction skip with that note.
type faultBuilder interface {
	Build(f scenario.Fault, env faultEnv) (inj faults.Fault, skip string, err error)
}

// judgeInput is everything verdict rules may read.
type judgeInput struct {
	Scenario *scenario.Scenario
	Entries  []timeline.Entry
	Requests []timeline.Request
	// Pod is the live target pod the oracle was computed from.
	Pod *corev1.Pod
	// LoadStart is the timeline offset at which the load (and the fault schedule) started.
	LoadStart time.Duration
	LoadEnd   time.Duration
}

// judger computes the timing oracle from the live pod and evaluates the scenario's expectations,
// returning the oracle and one result per expectation, in order (each result places the windows
// it judged against on the timeline). An error is a harness error, not a failed verdict.
type judger interface {
	Judge(in judgeInput) (*oracle.Oracle, []verdict.Result, error)
}
