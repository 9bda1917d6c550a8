package runner

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/scenario"
)

// holdUntil resolves a fault's Until from the deployed pod's own probes: the returned fault's
// Duration is that moment after the injection plus the file's Duration (the margin). It returns a
// skip reason instead when the pod's probes give no such moment or the hold would outlast the load.
func holdUntil(sc *scenario.Scenario, f scenario.Fault, pod *corev1.Pod) (scenario.Fault, string) {
	if pod == nil {
		return f, "no live target pod to read the probe timing from"
	}
	opts, err := oracle.ParseOptions(sc.Oracle)
	if err != nil {
		return f, fmt.Sprintf("oracle options: %v", err)
	}
	o, err := oracle.ForPod(pod, opts)
	if err != nil {
		return f, fmt.Sprintf("probe timing of the target: %v", err)
	}
	switch f.Until {
	case scenario.UntilReadinessWithdrawn:
		if o.Readiness == nil {
			return f, "the target has no readiness probe: nothing withdraws it, so there is no moment to hold the fault until"
		}
		hold := o.Readiness.Detection.Deadline()
		f.Duration += hold
		if f.End() > sc.Load.Duration {
			return f, fmt.Sprintf("held until readiness has withdrawn the pod at worst (%s after it starts, %s with the margin), the fault would end at %s, after the load ends at %s",
				hold, f.Duration, f.End(), sc.Load.Duration)
		}
		return f, ""
	}
	return f, fmt.Sprintf("unknown moment %q to hold the fault until", f.Until)
}
