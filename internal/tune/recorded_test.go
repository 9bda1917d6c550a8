package tune

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/probegate/probegate/fixtures/manifests"
	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/verdict/verdicttest"
	"github.com/probegate/probegate/reports"
)

// recordedScenario is a run recorded by `probegate run` on the kind cluster
// (internal/verdict/testdata) with the bundled good target's settings recorded on its timeline,
// as a run now records them (the recording predates the workload entry).
func recordedScenario(t *testing.T, name string) reports.ScenarioReport {
	t.Helper()
	tl, reqs := verdicttest.Recorded(t, filepath.Join("..", "verdict", "testdata"), name)
	objs, err := manifests.Objects("good")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		d, ok := o.(*appsv1.Deployment)
		if !ok {
			continue
		}
		e := workloadEntry(t, d.Spec.Template.Spec, d.Spec.Template.Annotations)
		e.Workload.Name = d.Name
		e.At = tl.Start().Add(20 * time.Millisecond)
		tl.Append(e)
		or, err := oracle.ForTemplate(d.Spec.Template, oracle.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return reports.ScenarioReport{Name: name, Variant: "good", Target: "fixture good", Oracle: &or, Timeline: tl, Requests: reqs,
			Started: tl.Start(), Finished: tl.Start().Add(time.Minute)}
	}
	t.Fatal("good manifest has no Deployment")
	return reports.ScenarioReport{}
}

// recordedDir writes both recorded runs as one report directory.
func recordedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	r := &reports.Report{ProbegateVersion: "test", KubernetesVersion: "v1.34.0", Started: start, Finished: start.Add(time.Hour),
		Scenarios: []reports.ScenarioReport{recordedScenario(t, "db-slowness"), recordedScenario(t, "pod-delete-under-load")}}
	if err := reports.WriteAll(dir, r); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRecordedRuns tunes the good target from a db-slowness and a pod-delete-under-load run
// recorded on a heavily loaded kind node.
func TestRecordedRuns(t *testing.T) {
	runs, err := LoadRuns([]string{recordedDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	res := Recommend(runs, Options{})
	if len(res.Workloads) != 1 || len(res.Skipped) != 0 {
		t.Fatalf("workloads %d, skipped %v", len(res.Workloads), res.Skipped)
	}
	w := res.Workloads[0]
	if w.Kind != "Deployment" || w.Name != "target" || w.Container != "target" || w.SpecSource != sourceRecorded {
		t.Fatalf("workload %+v", w)
	}

	// The replacement pod target-…-wc7z8 went running at +110.89 s and passed its startup probe at
	// +115.30 s: 4.41 s × 1.5 = 6.62 s, well inside the 60 s budget.
	st := field(t, w, "startupProbe.failureThreshold")
	if st.Status != Keep || len(st.Evidence) != 1 || st.Evidence[0].Pod != "target-6845486f5b-wc7z8" ||
		!near(st.Evidence[0].Value, 4.414) {
		t.Errorf("startup: %s %+v", st.Status, st.Evidence)
	}

	// The deleted pod exited 10.84 s after deletion, 5 s of it the app's withdrawal delay:
	// drain + cleanup 5.84 s; grace ≥ 5 + 5.84 + 2 = 12.84 → 13 s ≤ 25 s.
	g := field(t, w, "terminationGracePeriodSeconds")
	if g.Status != Keep || !near(g.Evidence[0].Value, 5.836) || !strings.Contains(g.Formula, "→ 13 s") {
		t.Errorf("grace: %s %s %+v", g.Status, g.Formula, g.Evidence)
	}

	// Withdrawals under load: every sample is a readiness or deletion withdrawal of this run, and
	// the delay the app declares (5 s) covers the longest with margin.
	wd := field(t, w, "lifecycle.preStop (withdrawal delay)")
	if wd.Status != Keep || len(wd.Evidence) == 0 || wd.Evidence[0].Value > 4*time.Second {
		t.Errorf("withdrawal: %s %s %+v", wd.Status, wd.Formula, wd.Evidence)
	}

	// Propagation is measured (kubelet → EndpointSlice, e.g. 0.14 s for target-…-xpghx at
	// +96.72 s), and liveness (10 s) stays behind readiness (2 × 1 s + 1 s + 2.1 s lag + it).
	lv := field(t, w, "livenessProbe.failureThreshold")
	if lv.Status != Keep || !strings.Contains(lv.Formula, "measured propagation") || len(lv.Evidence) == 0 {
		t.Errorf("liveness: %s %s", lv.Status, lv.Formula)
	}
	if rt := field(t, w, "readinessProbe.timeoutSeconds"); rt.Status != LeftAlone {
		t.Errorf("readiness timeout: %+v", rt)
	}

	var text bytes.Buffer
	if err := WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
}

func near(d time.Duration, secs float64) bool {
	return d.Seconds() > secs-0.01 && d.Seconds() < secs+0.01
}

func TestLoadRunsRejectsBadInput(t *testing.T) {
	empty := t.TempDir()
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, reports.ReportFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{"missing": filepath.Join(empty, "nope"), "no report.json": empty, "malformed": bad} {
		if _, err := LoadRuns([]string{dir}); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err %v, want one line", name, err)
		}
	}
}
