package runner

import (
	"log/slog"
	"time"

	"github.com/probegate/probegate/internal/cluster"
)

// DeployTimeout bounds one scenario's install: generous, because several scenarios deploy at once
// on a small machine.
const DeployTimeout = 5 * time.Minute

// NewKit wires the real packages: the fixture deployer, the informer observers, vegeta load, the
// fault injectors and the verdict rules. kc is the local kind cluster, nil for --kubeconfig runs
// (then no images are loaded and node-level faults are skipped).
func NewKit(kc *cluster.Cluster, log *slog.Logger) Kit {
	k := Kit{
		Deployer:  FixtureDeployer{Kind: kc, Logger: log, Timeout: DeployTimeout},
		Observers: InformerObservers{Logger: log},
		Load:      VegetaLoad{Logger: log},
		Faults:    DefaultFaults(),
		Judge:     VerdictJudge{},
	}
	if kc != nil {
		k.NodeExec = kc.NodeExec
	}
	return k
}

// DefaultFaults is the fault registry scenarios are validated and run against.
func DefaultFaults() FaultBuilder {
	return FaultRegistry{}
}
