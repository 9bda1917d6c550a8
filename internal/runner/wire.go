package runner

import (
	"log/slog"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
)

// NewKit wires the real packages: the deployer of app (the bundled fixture when app is nil), the
// informer observers, vegeta load, the fault registry and the verdict rules. kc is the local kind
// cluster, nil for --kubeconfig runs (then no images are loaded and node-level faults are skipped).
func NewKit(app *deploy.App, kc *cluster.Cluster, log *slog.Logger) Kit {
	k := Kit{
		Deployer:  deploy.NewDeployer(app, kc, log),
		Observers: informerObservers{Logger: log},
		Load:      vegetaLoad{Logger: log},
		Judge:     verdictJudge{},
	}
	if kc != nil {
		k.NodeExec = kc.NodeExec
	}
	return k
}
