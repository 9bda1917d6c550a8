package faults

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestRolloutAvailability(t *testing.T) {
	three := int32(3)
	pct := intstr.FromString("50%")
	zero := intstr.FromInt32(0)
	two := int32(2)
	for _, tc := range []struct {
		name        string
		progress    func() (Progress, error)
		unavailable int32
		rolls       string
	}{
		{"deployment, API default 25% of 3", func() (Progress, error) {
			return deploymentProgress(&appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &three}})
		}, 0, ""},
		{"deployment, maxUnavailable 0", func() (Progress, error) {
			return deploymentProgress(&appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &three, Strategy: appsv1.DeploymentStrategy{
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &zero}}}})
		}, 0, ""},
		{"deployment, Recreate", func() (Progress, error) {
			return deploymentProgress(&appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &three, Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RecreateDeploymentStrategyType}}})
		}, 3, ""},
		{"statefulset, one at a time", func() (Progress, error) {
			return statefulSetProgress(&appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &three}})
		}, 1, ""},
		{"statefulset, maxUnavailable 50%", func() (Progress, error) {
			return statefulSetProgress(&appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &three, UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: &pct}}}})
		}, 1, ""},
		{"statefulset, OnDelete", func() (Progress, error) {
			return statefulSetProgress(&appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &three, UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type: appsv1.OnDeleteStatefulSetStrategyType}}})
		}, 1, "OnDelete"},
		{"statefulset, partition 2", func() (Progress, error) {
			return statefulSetProgress(&appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &three, UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: &two}}}})
		}, 1, "partition 2"},
	} {
		p, err := tc.progress()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if p.MaxUnavailable != tc.unavailable || p.Replicas != 3 || !strings.Contains(p.Rolls, tc.rolls) || (tc.rolls == "" && p.Rolls != "") {
			t.Errorf("%s: %+v, want maxUnavailable %d, rolls %q", tc.name, p, tc.unavailable, tc.rolls)
		}
	}
}

func TestWorkloadKindsRegistered(t *testing.T) {
	for _, k := range []string{"Deployment", "statefulset"} {
		if _, ok := LookupWorkload(k); !ok {
			t.Errorf("%s not registered", k)
		}
	}
	if _, why := (Env{WorkloadKind: "DaemonSet", WorkloadName: "x"}).workload(); !strings.Contains(why, "rollouts are built for Deployment and StatefulSet") {
		t.Errorf("a DaemonSet: %q", why)
	}
}
