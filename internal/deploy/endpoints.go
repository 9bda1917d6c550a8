package deploy

import (
	"fmt"

	"github.com/probegate/probegate/internal/cluster"
)

// Names of the installed objects.
const (
	TargetName       = "target"        // Service and Deployment of the target
	TargetSelector   = "app=target"    // label selector of the target's pods
	TargetPort       = 8080            // the target's Service and container port
	AdminPort        = 9090            // the target's admin port (container only, never in a Service)
	PostgresName     = "postgres"      // Service and Deployment of PostgreSQL
	ToxiproxyName    = "toxiproxy"     // Deployment, and Service of the proxied DB port (5433)
	ToxiproxyAPIName = "toxiproxy-api" // NodePort Service of the toxiproxy API (8474)
	ToxiproxyProxy   = "postgres"      // the proxy the target's DB traffic goes through
)

// Endpoints tell the harness where the installed fixture answers.
type Endpoints struct {
	Namespace string
	Variant   string

	TargetService    string
	TargetDeployment string
	TargetSelector   string
	TargetPort       int32
	AdminPort        int32
	TargetNodePort   int32
	TargetURL        string // http://127.0.0.1:<host port> through kind's port mapping

	PostgresService string

	ToxiproxyAPIService string
	ToxiproxyNodePort   int32
	ToxiproxyURL        string // toxiproxy API from the host: http://127.0.0.1:<host port>
	ToxiproxyProxy      string // proxy name for faults (the target's DB path)
}

func endpointsFor(opts Options) Endpoints {
	tp, xp := cluster.TargetNodePort(opts.Slot), cluster.ToxiproxyNodePort(opts.Slot)
	hostURL := hostURL
	if opts.NoLoopback {
		hostURL = func(int32) string { return "" }
	}
	return Endpoints{
		Namespace: opts.Namespace, Variant: opts.Variant,
		TargetService: TargetName, TargetDeployment: TargetName, TargetSelector: TargetSelector,
		TargetPort: TargetPort, AdminPort: AdminPort, TargetNodePort: tp, TargetURL: hostURL(tp),
		PostgresService:     PostgresName,
		ToxiproxyAPIService: ToxiproxyAPIName, ToxiproxyNodePort: xp, ToxiproxyURL: hostURL(xp),
		ToxiproxyProxy: ToxiproxyProxy,
	}
}

// hostURL is the loopback URL kind publishes nodePort on, or "" when it is not mapped.
func hostURL(nodePort int32) string {
	hp := cluster.HostPort(nodePort)
	if hp == 0 {
		return ""
	}
	return fmt.Sprintf("http://127.0.0.1:%d", hp)
}
