package runner

import (
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/scenario"
)

// faultRegistry builds the faults package's fault instances from scenario faults.
type faultRegistry struct{}

// Build implements faultBuilder.
func (faultRegistry) Build(f scenario.Fault, env faultEnv) (faults.Fault, string, error) {
	t := env.Target
	fenv := faults.Env{
		Client: env.Conn.Client, Config: env.Conn.Config,
		Namespace: t.Namespace, Deployment: t.Deployment, WorkloadKind: t.WorkloadKind, WorkloadName: t.WorkloadName,
		Container: t.Container, Selector: t.Selector,
		ToxiproxyURL: t.ToxiproxyURL, ToxiproxyAPIPort: t.ToxiproxyAPIPort,
		DBProxy: t.DBProxy, Proxies: proxies(t.Proxies), ToxiproxySelector: t.ToxiproxySelector,
		AdminPort: t.AdminPort, StallPath: t.StallPath, BootstrapEnv: t.BootstrapEnv,
		Timeline: env.Timeline, Rand: env.Rand, NodeProcs: env.NodeProcs,
		PauseNode: env.PauseNode, PauseHow: env.PauseHow, SchedulableNodes: env.SchedulableNodes,
	}
	if env.Load != nil {
		fenv.Load = env.Load
	}
	inj, skip, err := faults.Build(faults.Spec{Type: f.Type, Name: faultName(env.Index), Duration: f.Duration, Params: f.Params}, fenv)
	if err != nil || skip != "" {
		return nil, skip, err
	}
	return inj, "", nil
}

// proxies are a target's dependency proxies as the faults act on them (nil for none).
func proxies(deployed map[string]deploy.Proxy) map[string]faults.Proxy {
	if len(deployed) == 0 {
		return nil
	}
	out := make(map[string]faults.Proxy, len(deployed))
	for name, p := range deployed {
		out[name] = faults.Proxy{Name: p.Name, Protocol: p.Protocol}
	}
	return out
}
