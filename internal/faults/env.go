package faults

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/probegate/probegate/internal/seed"
	"github.com/probegate/probegate/internal/timeline"
)

// Spec is one fault as a scenario states it.
type Spec struct {
	Type     string
	Name     string        // identifies the instance on the timeline, e.g. "faults[2]"
	Duration time.Duration // 0 for one-shot faults
	Params   map[string]string
}

// Env is everything the faults may act on for one target.
type Env struct {
	Client     kubernetes.Interface
	Config     *rest.Config
	Namespace  string
	Deployment string
	// WorkloadKind and WorkloadName name the workload under test ("StatefulSet", "web"); empty
	// kind: the Deployment.
	WorkloadKind, WorkloadName string
	Container                  string
	// BootstrapEnv is the target's own switch for a slow bootstrap: an env var of the container
	// naming the bootstrap time (the bundled target's BOOTSTRAP_DURATION); empty when it has none
	// (cold-start then throttles the new pods' CPU when the scenario gives a cpu limit).
	BootstrapEnv string
	Selector     string // the target's pods
	// ToxiproxyURL is the toxiproxy API on loopback and DBProxy the proxy DB faults act on by
	// default; empty when the target has none (DB faults are then skipped). Proxies are the
	// target's declared dependencies by name (a fault's dependency param picks one); nil for the
	// fixture, whose one proxy speaks PostgreSQL.
	ToxiproxyURL string
	// ToxiproxyAPIPort is the toxiproxy API's port in its pod: with no ToxiproxyURL (a cluster whose
	// NodePorts are not on loopback) the API is reached by a port-forward to it.
	ToxiproxyAPIPort int
	DBProxy          string
	Proxies          map[string]Proxy
	// ToxiproxySelector finds the toxiproxy pod for the DB probe ("app=toxiproxy" when empty).
	ToxiproxySelector string
	AdminPort         int    // the target's admin port; 0: stall is skipped
	StallPath         string // POSTed to on AdminPort with ?d=DURATION; DefaultStallPath when empty
	Timeline          *timeline.Timeline
	Rand              *seed.Source
	NodeProcs         NodeProcs // the nodes' processes; nil: freeze is skipped
	// PauseNode freezes (pause) or resumes a whole node, as (*cluster.Cluster).PauseNode does; nil
	// when the cluster's nodes are not containers on this machine (node-loss is then skipped).
	PauseNode func(ctx context.Context, node string, pause bool) error
	// PauseHow says what PauseNode stops, for the timeline ("" reads as a kind node container).
	PauseHow string
	// SchedulableNodes is how many nodes take the target's pods (not cordoned, no NoSchedule or
	// NoExecute taint); node faults need two.
	SchedulableNodes int
	Load             RateSetter // may be set later with SetLoad (overload)
	Logger           *slog.Logger
}

// Capability is something a fault needs from the target. A target without it has the fault skipped,
// with the reason missing gives; a target whose declaration lacks it does not take the fault at
// all, with the reason undeclared gives (NotApplicable).
type Capability struct {
	Name string
	Doc  string
	// missing says why env lacks the capability for a fault with these params ("" when it has it);
	// nil when the capability is handed over later and never makes a fault skip.
	missing func(env Env, params map[string]string) string
	// undeclared says why a target that declares d cannot have the capability ("" when it may);
	// nil when only the deployed target or the cluster can tell.
	undeclared func(d Declared, params map[string]string) string
}

// Declared is what a target states about itself before anything is deployed: the dependencies its
// target file puts a toxiproxy in front of, whether it names a stall endpoint, its workload kind.
// A fault needing a capability the declaration rules out does not apply to the target.
type Declared struct {
	Name         string   // the target, for messages
	Dependencies []string // declared dependency names
	Stall        bool     // a cooperative stall endpoint is declared
	Workload     string   // workload kind: "Deployment", "StatefulSet"
}

// The capabilities faults need.
var (
	// NeedsToxiproxy is a toxiproxy in front of the dependency the fault's "dependency" param names.
	NeedsToxiproxy = Capability{Name: "toxiproxy", Doc: "a toxiproxy in front of the dependency, declared in the target file",
		missing: func(env Env, params map[string]string) string {
			_, skip := env.proxy(params["dependency"])
			return skip
		},
		undeclared: func(d Declared, params map[string]string) string {
			if len(d.Dependencies) == 0 {
				return fmt.Sprintf("target %s declares no dependency (its target file's dependencies put a toxiproxy on the app's path to one): there is nothing to slow or cut", d.Name)
			}
			if dep := params["dependency"]; dep != "" && !slices.Contains(d.Dependencies, dep) {
				return fmt.Sprintf("target %s declares no dependency %q (it declares %s)", d.Name, dep, strings.Join(d.Dependencies, ", "))
			}
			return ""
		}}
	// NeedsAdminEndpoint is the target's admin port with a stall endpoint.
	NeedsAdminEndpoint = Capability{Name: "admin-endpoint", Doc: "the target's admin port with a stall endpoint",
		missing: func(env Env, _ map[string]string) string {
			if env.AdminPort == 0 {
				return "the target has no admin endpoint to stall"
			}
			return ""
		},
		undeclared: func(d Declared, _ map[string]string) string {
			if !d.Stall {
				return fmt.Sprintf("target %s declares no stall endpoint (stall: in its target file): a cooperative stall cannot be asked of it", d.Name)
			}
			return ""
		}}
	// NeedsNodeAccess is access to the processes on the pod's node: its kind node container, or
	// probegate's node agent (a privileged DaemonSet the runner starts on any other cluster).
	NeedsNodeAccess = Capability{Name: "node-access", Doc: "the processes on the pod's node, through the kind node container or probegate's node agent, a privileged DaemonSet on any other cluster",
		missing: func(env Env, _ map[string]string) string {
			if env.NodeProcs == nil {
				return "no access to the pod's node: neither a local kind node container nor probegate's node agent"
			}
			return ""
		}}
	// NeedsNodes is a second node the target's pods can move to.
	NeedsNodes = Capability{Name: "nodes", Doc: "at least two schedulable nodes",
		missing: func(env Env, _ map[string]string) string {
			if env.SchedulableNodes < 2 {
				return fmt.Sprintf("the cluster has %d schedulable node(s): a node fault needs a second one for the pods to move to "+
					"(a local cluster: probegate cluster create --workers 2)", env.SchedulableNodes)
			}
			return ""
		}}
	// NeedsNodePause is a way to stop a node: a local kind cluster's node container, or its kubelet
	// through the node agent.
	NeedsNodePause = Capability{Name: "node-pause", Doc: "a way to stop a node (a local kind node container, or its kubelet through the node agent)",
		missing: func(env Env, _ map[string]string) string {
			if env.PauseNode == nil {
				return "no way to stop a node (not a local kind cluster, and no node agent)"
			}
			return ""
		}}
	// NeedsRollout is a target workload whose pod template a rollout fault can change: a
	// registered workload kind (RegisterWorkload).
	NeedsRollout = Capability{Name: "rollout", Doc: "a target workload of a kind whose rollouts are built (Deployment, StatefulSet)",
		missing: func(env Env, _ map[string]string) string {
			_, why := env.workload()
			return why
		},
		undeclared: func(d Declared, _ map[string]string) string {
			if d.Workload == "" {
				return ""
			}
			if _, ok := LookupWorkload(d.Workload); !ok {
				return fmt.Sprintf("target %s is a %s: rollouts are built for %s", d.Name, d.Workload, strings.Join(WorkloadKinds(), " and "))
			}
			return ""
		}}
	// NeedsLoad is the scenario's running load, handed over with SetLoad when it starts.
	NeedsLoad = Capability{Name: "load", Doc: "the scenario's load generator (handed over when the load starts)"}
)

// Proxy is a toxiproxy proxy in front of one dependency, and the protocol its proof speaks.
type Proxy struct {
	Name string
	// Protocol is "postgres" (a round trip proves latency, timeouts and outages) or "tcp" (no
	// proof: the effect is then reported as not observed).
	Protocol string
}

// ProtocolPostgres is the protocol of the fixture's database.
const ProtocolPostgres = "postgres"

// proxy picks the proxy a DB fault acts on, or says why the target cannot take it.
func (env Env) proxy(dependency string) (Proxy, string) {
	reachable := env.ToxiproxyURL != "" || env.ToxiproxyAPIPort > 0 && env.Config != nil
	if !reachable || (env.DBProxy == "" && len(env.Proxies) == 0) {
		return Proxy{}, "the target has no toxiproxy in front of a dependency (declare it in the target file's dependencies)"
	}
	if env.Proxies == nil {
		if dependency != "" && dependency != env.DBProxy {
			return Proxy{}, fmt.Sprintf("the target has no dependency %q (it has %s)", dependency, env.DBProxy)
		}
		return Proxy{Name: env.DBProxy, Protocol: ProtocolPostgres}, ""
	}
	if dependency == "" {
		dependency = env.DBProxy
	}
	px, ok := env.Proxies[dependency]
	if !ok {
		names := make([]string, 0, len(env.Proxies))
		for n := range env.Proxies {
			names = append(names, n)
		}
		sort.Strings(names)
		return Proxy{}, fmt.Sprintf("the target has no dependency %q (it has %s)", dependency, strings.Join(names, ", "))
	}
	return px, ""
}

// dbProbe measures through the toxiproxy pod's proxy port, reached by a port-forward; nil without
// a REST config or for a dependency whose protocol it does not speak (the observe actions are then
// left out, and the fault's effect is unproven). With a client and the target's selector it also
// reads whether the target's pods connect through the proxy (proxyProbe).
func (env Env) dbProbe(client *toxiproxy.Client, px Proxy, timeout time.Duration) DBProbe {
	if env.Config == nil || px.Protocol != ProtocolPostgres {
		return nil
	}
	sel := env.ToxiproxySelector
	if sel == "" {
		sel = "app=toxiproxy"
	}
	choice := PodChoice{Client: env.Client, Namespace: env.Namespace, Selector: sel}
	cfg, proxy := env.Config, px.Name
	endpoint := func(ctx context.Context) (string, func(), error) {
		p, err := client.Proxy(proxy)
		if err != nil {
			return "", nil, fmt.Errorf("toxiproxy proxy %q: %w", proxy, err)
		}
		_, port, err := net.SplitHostPort(p.Listen)
		if err != nil {
			return "", nil, fmt.Errorf("toxiproxy proxy %q listens on %q: %w", proxy, p.Listen, err)
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			return "", nil, fmt.Errorf("toxiproxy proxy %q listens on %q: %w", proxy, p.Listen, err)
		}
		pod, err := choice.Choose(ctx)
		if err != nil {
			return "", nil, err
		}
		return PortForward(ctx, cfg, env.Namespace, pod.Name, n)
	}
	rt := PostgresRoundTrip{Endpoint: endpoint, Timeout: timeout, Via: "toxiproxy proxy " + proxy, Forwarded: true}
	if env.Client == nil || env.Selector == "" {
		return rt
	}
	return proxyProbe{PostgresRoundTrip: rt, exposure: func(ctx context.Context) Exposure {
		return proxyExposure(ctx, env.Client, env.Namespace, sel, env.Selector, proxy)
	}}
}

// proxyProbe is the round trip through a toxiproxy proxy, which also reads from toxiproxy's log
// whether the target's pods connect through that proxy (TargetPath).
type proxyProbe struct {
	PostgresRoundTrip
	exposure func(ctx context.Context) Exposure
}

// TargetPath implements TargetPath.
func (p proxyProbe) TargetPath(ctx context.Context) Exposure { return p.exposure(ctx) }
