package runner

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/scenario"
)

// scenarioOracle is the timing oracle of the live target pod with the scenario's oracle options:
// what the faults' holds are resolved from and the verdicts are judged against.
func scenarioOracle(sc *scenario.Scenario, pod *corev1.Pod) (oracle.Oracle, error) {
	opts, err := oracle.ParseOptions(sc.Oracle)
	if err != nil {
		return oracle.Oracle{}, fmt.Errorf("%s: oracle: %w", sc.File, err)
	}
	return oracle.ForPod(pod, opts)
}

// holdUntil resolves a fault's Until from the deployed pod's own probes: the returned fault's
// Duration is that moment after the injection plus the file's Duration (the margin). It returns the
// fault unchanged with a skip reason instead when the pod's probes give no such moment or the hold
// would outlast the load.
func holdUntil(sc *scenario.Scenario, f scenario.Fault, pod *corev1.Pod) (scenario.Fault, string) {
	if pod == nil {
		return f, "no live target pod to read the probe timing from"
	}
	o, err := scenarioOracle(sc, pod)
	if err != nil {
		return f, fmt.Sprintf("probe timing of the target: %v", err)
	}
	switch f.Until {
	case scenario.UntilReadinessWithdrawn:
		if o.Readiness == nil {
			return f, "the target has no readiness probe: nothing withdraws it, so there is no moment to hold the fault until"
		}
		held := f
		hold := o.Readiness.Detection.Deadline()
		held.Duration += hold
		if held.End() > sc.Load.Duration {
			return f, fmt.Sprintf("held until readiness has withdrawn the pod at worst (%s after it starts, %s with the margin), the fault would end at %s, after the load ends at %s",
				hold, held.Duration, held.End(), sc.Load.Duration)
		}
		return held, ""
	}
	return f, fmt.Sprintf("unknown moment %q to hold the fault until", f.Until)
}
