package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// auditControl is one control of an audited path (../shared/notes/verdict-audit.md): a user's
// target file whose broken property PASSed before the path was closed, run as a user runs it, and
// the outcome it must have now.
type auditControl struct {
	name string
	args []string // after the probegate binary
	code int      // the exit code it must end with
	// want: the verdicts that must show the broken property, by rule (every other verdict is free).
	want []wantVerdict
	// allInconclusive: every verdict of every scenario must be INCONCLUSIVE.
	allInconclusive bool
	// says: texts the output (stdout, or the report directory's report.json) must contain.
	says []string
	// inMakeTest: one of make test's lanes runs it (the others are run by hand: `go test -run
	// TestIntegrationAuditControls ./internal/cli` runs every control).
	inMakeTest bool
}

// wantVerdict is a verdict a control must have: its status, with observed (or one evidence note)
// containing note.
type wantVerdict struct {
	rule   string
	status verdict.Status
	note   string
}

// auditControls are the controls of the audited paths that the cluster can produce, each first run
// by hand (fixtures/README.md), in make test where inMakeTest says so.
var auditControls = []auditControl{
	{
		// N1: process-freeze PASSed a pod that never came back after its liveness restart.
		name:       "N1-boot-lock-process-freeze",
		inMakeTest: true,
		args:       []string{"run", "--target", "fixtures/nodb/boot-lock.target.yaml", "--scenario", "process-freeze"},
		code:       ExitFail,
		want:       []wantVerdict{{rule: "recovery-within", status: verdict.Fail, note: "not recovered by"}},
	},
	{
		// N2: cold-start PASSed a rollout whose new pods never came up.
		name:       "N2-join-stuck-cold-start",
		inMakeTest: true,
		args:       []string{"run", "--target", "fixtures/nodb/join-stuck.target.yaml", "--scenario", "cold-start"},
		code:       ExitFail,
		want: []wantVerdict{
			{rule: "recovery-within", status: verdict.Fail, note: "rollout not complete"},
			{rule: "startup-not-killed", status: verdict.Fail},
		},
	},
	{
		// N5: the one-shot recovery bound grew with the recovery it judged.
		name:       "N5-join-slow-pod-delete-under-load",
		inMakeTest: true,
		args:       []string{"run", "--target", "fixtures/nodb/join-slow.target.yaml", "--scenario", "pod-delete-under-load"},
		code:       ExitFail,
		want:       []wantVerdict{{rule: "recovery-within", status: verdict.Fail, note: "(LATE)"}},
	},
	{
		// N11: a database fault on a proxy the app does not go through confirmed itself.
		name:            "N11-bypass-db-outage",
		inMakeTest:      true,
		args:            []string{"run", "--target", "fixtures/statefulset/bypass.target.yaml", "--scenario", "db-outage"},
		code:            ExitInconclusive,
		allInconclusive: true,
		says:            []string{"no pod of the target has connected through it"},
	},
	{
		// N16: lint --confirm refuted a finding on the predicted verdict's PASS alone, though the
		// run did not show the fault reached the workload.
		name: "N16-flagged-always-ready-lint-confirm",
		args: []string{"lint", "fixtures/statefulset/flagged-always-ready",
			"--target", "fixtures/statefulset/flagged-always-ready.target.yaml", "--confirm", "--fail-on", "none"},
		code: ExitInconclusive,
		says: []string{"PG005", "inconclusive", "the run does not show db-slowness's faults reached the workload"},
	},
}

// TestIntegrationAuditControls runs each audited path's control on the cluster, one at a time, and
// checks its designated outcome: the FAIL (or INCONCLUSIVE) that was a PASS before the path was
// closed, with its evidence.
func TestIntegrationAuditControls(t *testing.T) {
	bin, root := clusterProbegate(t)
	for _, c := range auditControls {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runBuilt(t, bin, root, append(c.args, "--out", out)...)
			t.Logf("stdout:\n%s\nstderr (tail): %s", stdout, tail(stderr, 2000))
			if code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			checkAuditControl(t, c, out, stdout)
		})
	}
}

// checkAuditControl checks the reports a control's run left in out and its stdout.
func checkAuditControl(t *testing.T, c auditControl, out, stdout string) {
	t.Helper()
	raw, _ := os.ReadFile(filepath.Join(out, "report.json"))
	for _, says := range c.says {
		if !strings.Contains(stdout, says) && !strings.Contains(string(raw), says) {
			t.Errorf("neither the output nor report.json says %q", says)
		}
	}
	if c.args[0] != "run" {
		return
	}
	rep, err := reports.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scenarios) == 0 {
		t.Fatal("the report has no scenario")
	}
	for _, sc := range rep.Scenarios {
		if c.allInconclusive {
			if len(sc.Verdicts) == 0 {
				t.Errorf("%s has no verdict", sc.Name)
			}
			for _, v := range sc.Verdicts {
				if v.Status != verdict.Inconclusive {
					t.Errorf("%s %s: %s (%s), want INCONCLUSIVE", sc.Name, v.Rule, v.Status, v.Observed)
				}
			}
		}
		for _, w := range c.want {
			checkWantVerdict(t, sc, w)
		}
	}
}

// checkWantVerdict fails t unless sc has w's verdict with its status and note.
func checkWantVerdict(t *testing.T, sc reports.ScenarioReport, w wantVerdict) {
	t.Helper()
	for _, v := range sc.Verdicts {
		if v.Rule != w.rule {
			continue
		}
		found := strings.Contains(v.Observed, w.note)
		for _, ev := range v.Evidence {
			found = found || strings.Contains(ev.Note, w.note)
		}
		if v.Status != w.status || !found {
			t.Errorf("%s %s: %s (%s), evidence %+v; want %s with %q", sc.Name, v.Rule, v.Status, v.Observed, v.Evidence, w.status, w.note)
		}
		return
	}
	t.Errorf("no %s verdict in %s", w.rule, sc.Name)
}

// TestAuditControlsAllInMakeTest checks that make test's two lanes (hack/test.sh) run every audit
// control marked inMakeTest once between them, and no other: they pick the controls by name.
func TestAuditControlsAllInMakeTest(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "hack", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var picks []*regexp.Regexp
	for _, m := range regexp.MustCompile(`TestIntegrationAuditControls\$/([^' ]+)'`).FindAllStringSubmatch(string(script), -1) {
		picks = append(picks, regexp.MustCompile(m[1]))
	}
	for _, c := range auditControls {
		n := 0
		for _, p := range picks {
			if p.MatchString(c.name) {
				n++
			}
		}
		want := 0
		if c.inMakeTest {
			want = 1
		}
		if n != want {
			t.Errorf("audit control %s is run %d times by hack/test.sh's lanes, want %d", c.name, n, want)
		}
	}
}
