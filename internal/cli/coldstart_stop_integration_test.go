package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// TestIntegrationColdStartStopModeFails is the FAIL control of cold-start on an app with no
// bootstrap switch: each new pod's container is stopped on its node for the bootstrap (SIGSTOP),
// the way cold-start slows any app. The app (the bundled one with no database, as a user's target
// file with no bootstrapEnv) has no startup probe, so its liveness probe (3 failures 5 s apart)
// judges the held boot and kills it: startup-not-killed must FAIL, with the kill as evidence. The
// same app with its startup probe (fixtures/nodb/stop.target.yaml) PASSes (examples/README.md).
func TestIntegrationColdStartStopModeFails(t *testing.T) {
	bin, root := clusterProbegate(t)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runBuilt(t, bin, root, "run", "--target", filepath.Join("fixtures", "nodb", "no-startup-probe.target.yaml"),
		"--scenario", "cold-start", "--out", out)
	t.Logf("stdout:\n%s\nstderr (tail): %s", stdout, tail(stderr, 2000))
	if code != ExitFail {
		t.Errorf("exit %d, want %d", code, ExitFail)
	}
	rep, err := reports.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	sc := rep.Scenarios[0]
	stopped := false
	if sc.Timeline != nil {
		for _, e := range sc.Timeline.Entries() {
			if e.Kind == timeline.KindMark && e.Mark != nil && e.Mark.Name == "cold-start-stop" && strings.Contains(e.Mark.Detail, "SIGSTOP") {
				stopped = true
			}
		}
	}
	if !stopped {
		t.Errorf("no new pod's container was stopped (no cold-start-stop mark): the run did not take the stop path")
	}
	for _, v := range sc.Verdicts {
		if v.Rule != "startup-not-killed" {
			continue
		}
		killed := false
		for _, ev := range v.Evidence {
			killed = killed || strings.Contains(ev.Note, "killed by liveness before it was ready")
		}
		if v.Status != verdict.Fail || !killed {
			t.Errorf("startup-not-killed %s (%s), evidence %+v; want FAIL with a liveness kill before ready", v.Status, v.Observed, v.Evidence)
		}
		return
	}
	t.Errorf("no startup-not-killed verdict in %s", sc.Name)
}
