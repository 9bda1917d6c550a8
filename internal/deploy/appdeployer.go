package deploy

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/frontdoor"
)

// appDeployer installs the user's own app (a --target file) into each scenario's namespace with
// InstallApp: their manifests, their probes, with toxiproxy in front of declared dependencies.
type appDeployer struct {
	App    *App
	Kind   *cluster.Cluster
	Logger *slog.Logger
	// Timeout bounds each install (deploy's default when 0).
	Timeout time.Duration

	once   sync.Once
	dyn    dynamic.Interface
	mapper meta.RESTMapper
	err    error
}

// Preflight implements Deployer: the front door's cluster-scoped set-up is installed (once: it is
// idempotent), and on kind, every image the manifests run is loaded into the node (from the local
// Docker daemon, or from the image tarball a swap names). The variants are the fixture's, not the
// app's: ignored.
func (d *appDeployer) Preflight(ctx context.Context, c *cluster.Conn, _ []string) error {
	if err := d.setupDoor(ctx, c); err != nil {
		return fmt.Errorf("target %s: %w", d.App.Spec.Name, err)
	}
	if d.Kind == nil {
		return nil // an existing cluster pulls its own images
	}
	for _, img := range imagesToLoad(d.App) {
		var err error
		if tar, ok := d.App.Archives[img]; ok {
			err = d.Kind.LoadImageArchive(ctx, tar)
		} else {
			err = d.Kind.LoadImages(ctx, img)
		}
		if err != nil {
			return fmt.Errorf("target %s: %w", d.App.Spec.Name, err)
		}
	}
	return nil
}

// setupDoor runs the front door's cluster-scoped set-up, when it has one.
func (d *appDeployer) setupDoor(ctx context.Context, c *cluster.Conn) error {
	def, ok := frontdoor.Lookup(d.App.Door.Kind)
	if !ok || def.Setup == nil {
		return nil
	}
	if c == nil || c.Config == nil {
		return fmt.Errorf("front door %s: no cluster connection for its set-up", def.Kind)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("front door %s: dynamic client: %w", def.Kind, err)
	}
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	return frontdoor.Setup(ctx, def.Kind, frontdoor.Cluster{Client: c.Client, Dynamic: dyn, Log: log})
}

// imagesToLoad is every image a scenario of app runs: the manifests' own, toxiproxy when it is
// interposed on a dependency, and the front door's.
func imagesToLoad(app *App) []string {
	out := slices.Clone(app.Images)
	if len(app.Dependencies) > 0 {
		out = append(out, DefaultToxiproxyImage)
	}
	if d, ok := frontdoor.Lookup(app.Door.Kind); ok {
		out = append(out, d.Images...)
	}
	return out
}

// Install implements Deployer.
func (d *appDeployer) Install(ctx context.Context, c *cluster.Conn, req Request) (*Target, error) {
	d.once.Do(func() {
		if d.dyn, d.err = dynamic.NewForConfig(c.Config); d.err != nil {
			return
		}
		d.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Client.Discovery()))
	})
	if d.err != nil {
		return nil, fmt.Errorf("dynamic client: %w", d.err)
	}
	ep, err := InstallApp(ctx, c.Client, d.dyn, d.mapper, d.App, AppOptions{
		Namespace: req.Namespace, Slot: req.Slot, Replicas: int32(req.Replicas), Patch: req.Patch, Timeout: d.Timeout, Log: d.Logger,
		NoLoopback: req.NoLoopback,
	})
	if err != nil {
		return nil, err
	}
	t := &Target{
		Namespace: ep.Namespace, Deployment: ep.Deployment, Service: ep.Service, Container: ep.Container,
		WorkloadKind: d.App.Spec.Workload.Kind, WorkloadName: d.App.Spec.Workload.Name,
		Selector: ep.Selector, URL: ep.URL, ToxiproxyURL: ep.ToxiproxyURL, ToxiproxySelector: ep.ToxiproxySelector,
		Description: fmt.Sprintf("target %s (%s)", d.App.Spec.Name, ep.Workload),
	}
	if len(ep.Proxies) > 0 {
		t.Proxies, t.ToxiproxyAPIPort = ep.Proxies, toxiproxyAPI
		t.DBProxy = d.App.Dependencies[0].Name
	}
	if s := d.App.Spec.Stall; s != nil {
		t.AdminPort, t.StallPath = s.Port, s.Path
	}
	t.BootstrapEnv = d.App.Spec.BootstrapEnv
	t.Door = ep.Door
	return t, nil
}
