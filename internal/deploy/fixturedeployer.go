package deploy

import (
	"context"
	"log/slog"
	"time"

	"github.com/probegate/probegate/internal/cluster"
)

// fixtureDeployer installs the bundled fixture (PostgreSQL, toxiproxy, a target variant) with
// Install. Kind, when set, is used to load the images before the first install.
type fixtureDeployer struct {
	Kind   *cluster.Cluster
	Logger *slog.Logger
	// Timeout bounds each install (deploy's default when 0).
	Timeout time.Duration
}

// Preflight implements Deployer: every image the variants need must be built, and on kind it is
// loaded into the node.
func (d fixtureDeployer) Preflight(ctx context.Context, _ *cluster.Conn, variants []string) error {
	seen := map[string]bool{}
	var images []string
	for _, v := range variants {
		for _, img := range Images(Options{Namespace: "preflight", Variant: v}) {
			if !seen[img] {
				seen[img] = true
				images = append(images, img)
			}
		}
	}
	if d.Kind == nil {
		return nil // an existing cluster: its images are its own business
	}
	return d.Kind.LoadImages(ctx, images...)
}

// Install implements Deployer.
func (d fixtureDeployer) Install(ctx context.Context, c *cluster.Conn, req Request) (*Target, error) {
	opts := Options{
		Namespace: req.Namespace, Variant: req.Variant, Slot: req.Slot, Replicas: int32(req.Replicas), Log: d.Logger,
		Timeout: d.Timeout, Patch: req.Patch, NoLoopback: req.NoLoopback,
	}
	if req.Bootstrap > 0 {
		opts.Env = map[string]string{"BOOTSTRAP_DURATION": req.Bootstrap.String()}
	}
	ep, err := Install(ctx, c.Client, opts)
	if err != nil {
		return nil, err
	}
	return &Target{
		Namespace: ep.Namespace, Deployment: ep.TargetDeployment, Service: ep.TargetService, Container: "target",
		Selector: ep.TargetSelector, URL: ep.TargetURL, ToxiproxyURL: ep.ToxiproxyURL, DBProxy: ep.ToxiproxyProxy,
		AdminPort: int(ep.AdminPort), Description: "fixture " + ep.Variant, ToxiproxyAPIPort: toxiproxyAPI,
		BootstrapEnv: "BOOTSTRAP_DURATION",
	}, nil
}
