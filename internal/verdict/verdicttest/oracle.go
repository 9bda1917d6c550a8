package verdicttest

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/probegate/probegate/internal/oracle"
)

// GoodSpec is a pod spec shaped like the bundled good target: readiness F=2 × P=1s, liveness
// F=2 × P=2s, startup F=30 × P=1s, each with a 1 s timeout, a 2 s preStop sleep and a 10 s grace.
func GoodSpec() corev1.PodSpec {
	probe := func(path string, period, failure int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(8080)}},
			PeriodSeconds: period, TimeoutSeconds: 1, FailureThreshold: failure, SuccessThreshold: 1,
		}
	}
	grace := int64(10)
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: &grace,
		Containers: []corev1.Container{{
			Name:           Container,
			ReadinessProbe: probe("/health/ready", 1, 2),
			LivenessProbe:  probe("/health/live", 2, 2),
			StartupProbe:   probe("/health/startup", 1, 30),
			Lifecycle:      &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 2}}},
		}},
	}
}

// DefaultOracle is the oracle of GoodSpec with default allowances: readiness withdrawal in
// [1s, 3s] + 2s propagation (by 5s), liveness restart in [2s, 5s] + 10s grace + 2s restart (by 17s),
// recovery by 4s, startup budget 30s, grace 10s.
func DefaultOracle() oracle.Oracle {
	o, err := oracle.Compute(GoodSpec(), map[string]string{oracle.AnnotationDrain: "3"}, oracle.Options{})
	if err != nil {
		panic(fmt.Sprintf("verdicttest: default oracle: %v", err))
	}
	return o
}
