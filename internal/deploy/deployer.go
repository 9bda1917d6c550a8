package deploy

import (
	"context"
	"log/slog"
	"time"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/frontdoor"
)

// Deployer installs a target and its dependencies into a fresh namespace and waits until it is
// ready. NewDeployer returns the real one; the runner calls nothing else of this package.
type Deployer interface {
	// Preflight checks, before anything is created, that everything the deployer will install is
	// available (images built, and on kind loaded into the node), for these fixture variants.
	Preflight(ctx context.Context, c *cluster.Conn, variants []string) error
	// Install deploys into req.Namespace, which must exist.
	Install(ctx context.Context, c *cluster.Conn, req Request) (*Target, error)
}

// Request says what to deploy into a namespace.
type Request struct {
	Namespace string
	// Variant is the bundled fixture's variant (ignored for a user's app).
	Variant  string
	Replicas int
	// Bootstrap overrides the fixture's simulated bootstrap time when non-zero.
	Bootstrap time.Duration
	// Slot is the cluster port slot this run owns (target and toxiproxy NodePorts).
	Slot int
	// Patch, when set, is a strategic-merge patch of the workload under test applied before it is
	// installed (tune --verify's recommended settings).
	Patch []byte
	// NoLoopback reaches nothing through 127.0.0.1: a cluster whose NodePorts are not published
	// there, driven by in-cluster load. URL and ToxiproxyURL stay empty; the toxiproxy API is then
	// reached by a port-forward (ToxiproxyAPIPort).
	NoLoopback bool
}

// Target is one deployed instance of the app under test and how to reach it.
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
	// ToxiproxyAPIPort is the toxiproxy API's port in its pod (port-forwarded to when ToxiproxyURL
	// is empty), 0 when the target has no toxiproxy.
	ToxiproxyAPIPort int
	// Proxies are a user's app's dependencies by name (nil for the fixture); ToxiproxySelector
	// finds the interposed toxiproxy's pod.
	Proxies           map[string]Proxy
	ToxiproxySelector string
	// AdminPort is the target's admin port inside the pod (stall), 0 when it has none; StallPath
	// the stall endpoint on it (the fixture's when empty).
	AdminPort int
	StallPath string
	// BootstrapEnv is the app's own slow-bootstrap switch (an env var), empty when it has none.
	BootstrapEnv string
	// Door is how the load reaches the pods: the zero value is kube-proxy through URL; a door
	// with a controller names its NodePort and the pods whose log is its record.
	Door frontdoor.Opened
	// Description names the target for reports ("fixture good", "target shop (deployment/web)").
	Description string
	// Cleanup, when set, undoes what Install created outside the run's own namespace.
	Cleanup func(ctx context.Context) error
}

// fixtureTimeout bounds one install of the bundled fixture: generous, because several scenarios
// deploy at once on a small machine.
const fixtureTimeout = 5 * time.Minute

// NewDeployer returns the deployer of a run: the user's app when app is set (a --target file), the
// bundled fixture otherwise. kind is the local kind cluster the images are loaded into before the
// first install; nil for an existing cluster, which pulls its own.
func NewDeployer(app *App, kind *cluster.Cluster, log *slog.Logger) Deployer {
	if app != nil {
		return &appDeployer{App: app, Kind: kind, Logger: log}
	}
	return fixtureDeployer{Kind: kind, Logger: log, Timeout: fixtureTimeout}
}
