package runner

import (
	"log/slog"
	"time"

	"github.com/probegate/probegate/internal/cluster"
)

// deployTimeout bounds one scenario's install: generous, because several scenarios deploy at once
// on a small machine.
const deployTimeout = 5 * time.Minute

// NewKit wires the real packages: the fixture deployer, the informer observers, vegeta load, the
// fault registry and the verdict rules. kc is the local kind cluster, nil for --kubeconfig runs
// (then no images are loaded and node-level faults are skipped).
func NewKit(kc *cluster.Cluster, log *slog.Logger) Kit {
	k := Kit{
		Deployer:  fixtureDeployer{Kind: kc, Logger: log, Timeout: deployTimeout},
		Observers: informerObservers{Logger: log},
		Load:      vegetaLoad{Logger: log},
		Faults:    faultRegistry{},
		Judge:     verdictJudge{},
	}
	if kc != nil {
		k.NodeExec = kc.NodeExec
	}
	return k
}
