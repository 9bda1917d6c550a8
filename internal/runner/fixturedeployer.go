package runner

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/scenario"
)

// fixtureDeployer installs the bundled fixture (PostgreSQL, toxiproxy, a target variant) with the
// deploy package. Kind, when set, is used to load the images before the first install.
type fixtureDeployer struct {
	Kind   *cluster.Cluster
	Logger *slog.Logger
	// Timeout bounds each install (deploy's default when 0).
	Timeout time.Duration
}

// Preflight implements Preflighter: every image the variants need must be built, and on kind it is
// loaded into the node.
func (d fixtureDeployer) Preflight(ctx context.Context, c *cluster.Conn, variants []string, custom *scenario.TargetSpec) error {
	if custom != nil {
		return fmt.Errorf("target %s: custom targets are not deployable yet by the fixture deployer", custom.Name)
	}
	seen := map[string]bool{}
	var images []string
	for _, v := range variants {
		for _, img := range deploy.Images(deploy.Options{Namespace: "preflight", Variant: v}) {
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
func (d fixtureDeployer) Install(ctx context.Context, c *cluster.Conn, req InstallRequest) (*Target, error) {
	if req.Custom != nil {
		return nil, fmt.Errorf("target %s: custom targets are not deployable yet by the fixture deployer", req.Custom.Name)
	}
	opts := deploy.Options{
		Namespace: req.Namespace, Variant: req.Variant, Slot: req.Slot, Replicas: int32(req.Replicas), Log: d.Logger,
		Timeout: d.Timeout, Patch: req.Patch,
	}
	if req.Bootstrap > 0 {
		opts.Env = map[string]string{"BOOTSTRAP_DURATION": req.Bootstrap.String()}
	}
	ep, err := deploy.Install(ctx, c.Client, opts)
	if err != nil {
		return nil, err
	}
	return &Target{
		Namespace: ep.Namespace, Deployment: ep.TargetDeployment, Service: ep.TargetService, Container: "target",
		Selector: ep.TargetSelector, URL: ep.TargetURL, ToxiproxyURL: ep.ToxiproxyURL, DBProxy: ep.ToxiproxyProxy,
		AdminPort: int(ep.AdminPort), Description: "fixture " + ep.Variant,
	}, nil
}
