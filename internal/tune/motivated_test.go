package tune

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMotivatedNamesTheRunsTheFormulaUsed: the grace period is set by pod-delete-under-load's
// clean exit; drain-exceeds-grace's forced kill at a cut grace is shown but set nothing, so
// --verify must not re-run it for this change. Liveness's dropped initial delay comes with the
// added startup probe: cold-start motivates both.
func TestMotivatedNamesTheRunsTheFormulaUsed(t *testing.T) {
	spec := podSpec(nil, 3, 12)
	spec.Containers[0].LivenessProbe.InitialDelaySeconds = 10
	del := newRun(t, spec, nil)
	del.deleted(10*s, "web-a", 12)
	del.pod(22*s, "web-a", "container/web/state", "running", "terminated:Completed:0")
	cut := newRun(t, spec, nil)
	cut.deleted(10*s, "web-b", 5)
	cut.pod(15500*time.Millisecond, "web-b", "container/web/state", "running", "terminated:Error:137")
	cold := newRun(t, spec, nil)
	cold.boot("web-c", 10*s, 30*s, "ready")
	w := recommend(t, del.report("pod-delete-under-load"), cut.report("drain-exceeds-grace"), cold.report("cold-start"))

	g := field(t, w, "terminationGracePeriodSeconds")
	if !slices.ContainsFunc(g.Evidence, func(e Evidence) bool { return e.Scenario == "drain-exceeds-grace/good" }) {
		t.Fatalf("the cut-grace sample is no longer shown: %+v", g.Evidence)
	}
	if want := []ScenarioRef{{"run1", "pod-delete-under-load/good"}}; !slices.Equal(g.Motivated, want) {
		t.Errorf("grace motivated by %v, want %v", g.Motivated, want)
	}
	want := []ScenarioRef{{"run1", "cold-start/good"}}
	for _, f := range []string{"startupProbe", "livenessProbe.initialDelaySeconds"} {
		if r := field(t, w, f); !r.Patched() || !slices.Equal(r.Motivated, want) {
			t.Errorf("%s: patched %v, motivated by %v, want %v", f, r.Patched(), r.Motivated, want)
		}
	}
	if r := field(t, w, "readinessProbe.timeoutSeconds"); r.Patched() || len(r.Motivated) != 0 {
		t.Errorf("readiness timeout (left alone): patched %v, motivated %v", r.Patched(), r.Motivated)
	}
}

func TestWorkloadPatchHoldsOnlyTheGivenChanges(t *testing.T) {
	spec := podSpec(nil, 3, 12)
	r := newRun(t, spec, nil)
	r.deleted(10*s, "web-a", 12)
	r.pod(22*s, "web-a", "container/web/state", "running", "terminated:Completed:0")
	w := recommend(t, r.report("pod-delete-under-load"))
	raw, err := WorkloadPatch(w, w.Recommendations)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "terminationGracePeriodSeconds: 14") {
		t.Fatalf("patch:\n%s", raw)
	}
	others := slices.DeleteFunc(slices.Clone(w.Recommendations), func(r Recommendation) bool { return r.Field == "terminationGracePeriodSeconds" })
	if raw, err := WorkloadPatch(w, others); err != nil || raw != nil {
		t.Errorf("without the grace change: %q, %v; want no patch", raw, err)
	}
}
