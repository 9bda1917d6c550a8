package runner

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/loadgen/agent"
)

// New returns a runner on the cluster c with the real parts: the deployer of app (the bundled
// fixture when app is nil), the informer observers, the host load in the target's protocol
// (load.go), the fault registry and the verdict rules. kc is the local kind cluster, nil for
// --kubeconfig runs (then no images are loaded and node-level faults are skipped).
func New(c *cluster.Conn, kc *cluster.Cluster, app *deploy.App, opts Options) *Runner {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	k := kit{
		deployer:  deploy.NewDeployer(app, kc, log),
		observers: informerObservers{Logger: log},
		load:      hostLoad{Logger: log},
		judge:     verdictJudge{},
	}
	if kc != nil {
		k.nodeExec, k.nodeExecOn, k.ingressNode = kc.NodeExec, kc.NodeExecOn, kc.NodeContainer
		k.pauseNode = kc.PauseNode
	}
	if opts.LoadAgents > 0 {
		if opts.AgentImage == "" {
			opts.AgentImage = agent.DefaultImage
		}
		k.load = agentLoad{client: c.Client, n: opts.LoadAgents, image: opts.AgentImage, log: log}
	}
	return &Runner{Conn: c, kit: k, Opts: opts, kc: kc}
}

// Preflight checks that what the variants need is on the cluster (the images, loaded into kind
// when they are not) before anything is deployed.
func (r *Runner) Preflight(ctx context.Context, variants []string) error {
	if r.Opts.LoadAgents > 0 && r.kc != nil {
		if err := r.kc.LoadImages(ctx, r.Opts.AgentImage); err != nil {
			return fmt.Errorf("in-cluster load agents: %w", err)
		}
	}
	return r.kit.deployer.Preflight(ctx, r.Conn, variants)
}

// WithPatch returns a runner on the same cluster and parts that installs the target with patch (a
// strategic-merge patch of its workload, as tune writes it) applied; r is left unchanged.
func (r *Runner) WithPatch(patch []byte) *Runner {
	opts := r.Opts
	opts.Patch = patch
	return &Runner{Conn: r.Conn, kit: r.kit, Opts: opts, kc: r.kc}
}
