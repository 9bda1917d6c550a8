package faults

import (
	"context"
	"fmt"
	"log/slog"
	"net"
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
	Container  string
	Selector   string // the target's pods
	// ToxiproxyURL is the toxiproxy API on loopback and DBProxy the proxy DB faults act on by
	// default; empty when the target has none (DB faults are then skipped). Proxies are the
	// target's declared dependencies by name (a fault's dependency param picks one); nil for the
	// fixture, whose one proxy speaks PostgreSQL.
	ToxiproxyURL string
	DBProxy      string
	Proxies      map[string]Proxy
	// ToxiproxySelector finds the toxiproxy pod for the DB probe ("app=toxiproxy" when empty).
	ToxiproxySelector string
	AdminPort         int    // the target's admin port; 0: stall is skipped
	StallPath         string // POSTed to on AdminPort with ?d=DURATION; DefaultStallPath when empty
	Timeline          *timeline.Timeline
	Rand              *seed.Source
	NodeExec          NodeExec   // nil: freeze is skipped
	Load              RateSetter // may be set later with SetLoad (overload)
	Logger            *slog.Logger
}

// param describes one accepted parameter.
type param struct {
	kind string // duration, number, bool, pod, string
	help string
}

var depParam = param{"string", "the target's dependency to act on (default its first; the fixture's database)"}

var catalogue = map[string]map[string]param{
	TypeDBLatency:     {"latency": {"duration", "added to every DB reply (default 1s)"}, "jitter": {"duration", "± random jitter"}, "dependency": depParam},
	TypeDBTimeout:     {"timeout": {"duration", "close connections after this (default 0: hold them open)"}, "dependency": depParam},
	TypeDBDown:        {"dependency": depParam},
	TypeStall:         {"pod": {"pod", "random (default) or a pod name"}, "d": {"duration", "stall length (default: the fault's duration, else 5s)"}},
	TypeFreeze:        {"pod": {"pod", "random (default) or a pod name"}, "container": {"string", "container to freeze (default the first)"}},
	TypeColdStart:     {"bootstrap": {"duration", "bootstrap time of the new pods (required)"}, "env": {"string", "the env var holding it (default " + DefaultBootstrapEnv + ")"}, "restore": {"bool", "roll back to the old value on revert (default true)"}},
	TypePodDelete:     {"pod": {"pod", "random (default) or a pod name"}, "grace": {"duration", "grace period (default the pod's)"}},
	TypeEvict:         {"pod": {"pod", "random (default) or a pod name"}, "grace": {"duration", "grace period (default the pod's)"}},
	TypeRollingUpdate: {},
	TypeOverload:      {"rate": {"number", "the raised rate in requests per second (required)"}},
}

// Types lists the fault types, sorted.
func Types() []string {
	out := make([]string, 0, len(catalogue))
	for t := range catalogue {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ParamHelp describes the parameters a fault type accepts (name → meaning), nil for an unknown type.
func ParamHelp(typ string) map[string]string {
	known, ok := catalogue[typ]
	if !ok {
		return nil
	}
	out := make(map[string]string, len(known))
	for name, p := range known {
		out[name] = p.help
	}
	return out
}

// CheckParams returns an error naming the first unknown, malformed or missing parameter.
func CheckParams(typ string, params map[string]string) error {
	known, ok := catalogue[typ]
	if !ok {
		return fmt.Errorf("unknown fault type %q (known: %s)", typ, strings.Join(Types(), ", "))
	}
	for k, v := range params {
		p, ok := known[k]
		if !ok {
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			sort.Strings(names)
			return fmt.Errorf("fault %s: unknown parameter %q (known: %s)", typ, k, strings.Join(names, ", "))
		}
		if err := checkValue(p.kind, v); err != nil {
			return fmt.Errorf("fault %s: parameter %s=%q: %w", typ, k, v, err)
		}
	}
	switch typ {
	case TypeColdStart:
		if params["bootstrap"] == "" {
			return fmt.Errorf("fault %s: parameter bootstrap is required", typ)
		}
	case TypeOverload:
		if params["rate"] == "" {
			return fmt.Errorf("fault %s: parameter rate is required", typ)
		}
	}
	return nil
}

func checkValue(kind, v string) error {
	switch kind {
	case "duration":
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		if d < 0 {
			return fmt.Errorf("negative duration")
		}
	case "number":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return err
		}
		if f <= 0 {
			return fmt.Errorf("want a positive number")
		}
	case "bool":
		_, err := strconv.ParseBool(v)
		return err
	case "pod", "string":
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("empty")
		}
	}
	return nil
}

// Build returns the fault for spec on env, or a skip reason when the target cannot take it (no
// toxiproxy, no admin port, no node access), or an error for bad parameters.
func Build(spec Spec, env Env) (Fault, string, error) {
	if err := CheckParams(spec.Type, spec.Params); err != nil {
		return nil, "", err
	}
	p := spec.Params
	dur := func(k string, def time.Duration) time.Duration {
		if v, ok := p[k]; ok {
			d, _ := time.ParseDuration(v)
			return d
		}
		return def
	}
	optDur := func(k string) *time.Duration {
		if _, ok := p[k]; !ok {
			return nil
		}
		d := dur(k, 0)
		return &d
	}
	rec := Recorder{Timeline: env.Timeline, Name: spec.Name}
	choice := PodChoice{Client: env.Client, Namespace: env.Namespace, Selector: env.Selector, Pod: p["pod"], Rand: env.Rand}

	switch spec.Type {
	case TypeDBLatency, TypeDBTimeout, TypeDBDown:
		proxy, skip := env.proxy(p["dependency"])
		if skip != "" {
			return nil, skip, nil
		}
		client, err := NewToxiproxyClient(env.ToxiproxyURL)
		if err != nil {
			return nil, "", err
		}
		latency := dur("latency", time.Second)
		switch spec.Type {
		case TypeDBLatency:
			probe := env.dbProbe(client, proxy, latency+5*time.Second)
			return NewDBLatency(rec, client, proxy.Name, latency, dur("jitter", 0), probe), "", nil
		case TypeDBTimeout:
			return NewDBTimeout(rec, client, proxy.Name, dur("timeout", 0), env.dbProbe(client, proxy, 3*time.Second)), "", nil
		default:
			return NewDBDown(rec, client, proxy.Name, env.dbProbe(client, proxy, 3*time.Second)), "", nil
		}
	case TypeStall:
		if env.AdminPort == 0 {
			return nil, "the target has no admin endpoint to stall", nil
		}
		if env.Config == nil {
			return nil, "", fmt.Errorf("stall: no REST config to port-forward with")
		}
		d := dur("d", spec.Duration)
		if d == 0 {
			d = 5 * time.Second
		}
		st := NewStall(rec, choice, env.AdminPort, d, RESTForwarder(env.Config))
		if env.StallPath != "" {
			st.Path = env.StallPath
		}
		return st, "", nil
	case TypeFreeze:
		if env.NodeExec == nil {
			return nil, "no access to the node's container runtime (not a local kind cluster)", nil
		}
		ctr := env.Container
		if v, ok := p["container"]; ok {
			ctr = v
		}
		return NewFreeze(rec, choice, ctr, env.NodeExec), "", nil
	case TypeColdStart:
		if env.Deployment == "" {
			return nil, "the target is not a Deployment", nil
		}
		f := NewColdStart(rec, env.Client, env.Namespace, env.Deployment, env.Container, dur("bootstrap", 0))
		if v, ok := p["env"]; ok {
			f.Env = v
		}
		if v, ok := p["restore"]; ok {
			f.Restore, _ = strconv.ParseBool(v)
		}
		return f, "", nil
	case TypePodDelete:
		return NewPodDelete(rec, choice, optDur("grace")), "", nil
	case TypeEvict:
		return NewEvict(rec, choice, optDur("grace")), "", nil
	case TypeRollingUpdate:
		if env.Deployment == "" {
			return nil, "the target is not a Deployment", nil
		}
		return NewRollingUpdate(rec, env.Client, env.Namespace, env.Deployment), "", nil
	case TypeOverload:
		rate, _ := strconv.ParseFloat(p["rate"], 64)
		f := NewOverload(rec, rate)
		f.For = spec.Duration
		if env.Load != nil {
			f.SetLoad(env.Load)
		}
		return f, "", nil
	}
	return nil, "", fmt.Errorf("fault type %q has no builder", spec.Type)
}

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
	if env.ToxiproxyURL == "" || (env.DBProxy == "" && len(env.Proxies) == 0) {
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
// left out, and the fault's effect is unproven).
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
	return PostgresRoundTrip{Endpoint: endpoint, Timeout: timeout, Via: "toxiproxy proxy " + proxy}
}
