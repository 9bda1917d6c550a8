package runner

import (
	"log/slog"

	"github.com/probegate/probegate/internal/cluster"
)

// NewKit wires the real packages: the fixture deployer, the informer observers, vegeta load, the
// fault injectors and the verdict rules. kc is the local kind cluster, nil for --kubeconfig runs
// (then no images are loaded and node-level faults are skipped).
func NewKit(kc *cluster.Cluster, log *slog.Logger) Kit {
	k := Kit{
		Deployer:  FixtureDeployer{Kind: kc, Logger: log},
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
