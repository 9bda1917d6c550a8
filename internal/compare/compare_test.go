package compare_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/compare"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

var start = time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)

// lead is terminating-before-exit with a withdrawal lead of v seconds against a 2 s minimum.
func lead(st verdict.Status, v float64) verdict.Result {
	return verdict.Result{Rule: "terminating-before-exit", Status: st,
		Measure: &verdict.Measure{Name: "withdrawal lead before exit", Value: v, Unit: "s", Bound: 2, Direction: verdict.AtLeast}}
}

// recovery is recovery-within with a recovery time of v seconds against a 15 s bound.
func recovery(st verdict.Status, v float64) verdict.Result {
	return verdict.Result{Rule: "recovery-within", Status: st,
		Measure: &verdict.Measure{Name: "recovery time", Value: v, Unit: "s", Bound: 15, Direction: verdict.AtMost}}
}

// restarts is no-unexpected-restarts with n restarts (bound 0).
func restarts(n float64) verdict.Result {
	st := verdict.Pass
	if n > 0 {
		st = verdict.Fail
	}
	return verdict.Result{Rule: "no-unexpected-restarts", Status: st,
		Measure: &verdict.Measure{Name: "unexpected restarts", Value: n, Unit: "restarts", Bound: 0, Direction: verdict.AtMost}}
}

func scenario(name string, vs ...verdict.Result) reports.ScenarioReport {
	return reports.ScenarioReport{Name: name, Variant: "good", Started: start, Finished: start.Add(time.Minute), Verdicts: vs}
}

func run(path string, scs ...reports.ScenarioReport) compare.Run {
	return compare.Run{Path: path, Report: &reports.Report{SchemaVersion: reports.SchemaVersion, Started: start, Scenarios: scs}}
}

func verdictOf(t *testing.T, c *compare.Comparison, sc, rule string) compare.Verdict {
	t.Helper()
	for _, s := range c.Scenarios {
		if s.Name != sc {
			continue
		}
		for _, v := range s.Verdicts {
			if v.Rule == rule {
				return v
			}
		}
	}
	t.Fatalf("no verdict %s in %s", rule, sc)
	return compare.Verdict{}
}

func TestCompareFlagsDriftTowardTheBound(t *testing.T) {
	def, _ := compare.ParseThresholds(nil)
	perRule, _ := compare.ParseThresholds([]string{"recovery-within=50"})
	cases := []struct {
		name     string
		th       compare.Thresholds
		old, new []verdict.Result // several old: one run each
		drift    bool
		consumed float64 // NaN: none
	}{
		// The lead shrinks from 5.4 s to 2.3 s with 2 s required: 91 % of the 3.4 s headroom gone.
		{"lead shrinks toward its minimum", def, []verdict.Result{lead(verdict.Pass, 5.4)}, []verdict.Result{lead(verdict.Pass, 2.3)}, true, 3.1 / 3.4},
		{"lead grows, away from its minimum", def, []verdict.Result{lead(verdict.Pass, 2.3)}, []verdict.Result{lead(verdict.Pass, 5.4)}, false, -3.1 / 0.3},
		{"recovery grows a little", def, []verdict.Result{recovery(verdict.Pass, 7.6)}, []verdict.Result{recovery(verdict.Pass, 8)}, false, 0.4 / 7.4},
		{"recovery grows toward its bound", def, []verdict.Result{recovery(verdict.Pass, 7.6)}, []verdict.Result{recovery(verdict.Pass, 11)}, true, 3.4 / 7.4},
		{"the same, under a looser per-rule threshold", perRule, []verdict.Result{recovery(verdict.Pass, 7.6)}, []verdict.Result{recovery(verdict.Pass, 11)}, false, 3.4 / 7.4},
		{"recovery shrinks", def, []verdict.Result{recovery(verdict.Pass, 11)}, []verdict.Result{recovery(verdict.Pass, 7.6)}, false, -3.4 / 4},
		// A trend: the baseline is the old runs' median, so one noisy night neither hides a drift…
		{"trend: steady, then a drop", def, []verdict.Result{lead(verdict.Pass, 5.4), lead(verdict.Pass, 2.5), lead(verdict.Pass, 5.2)},
			[]verdict.Result{lead(verdict.Pass, 2.3)}, true, 2.9 / 3.2},
		// …nor raises one.
		{"trend: one noisy night", def, []verdict.Result{lead(verdict.Pass, 5.4), lead(verdict.Pass, 2.4), lead(verdict.Pass, 5.3)},
			[]verdict.Result{lead(verdict.Pass, 5.0)}, false, 0.3 / 3.3},
		{"at the bound, no further", def, []verdict.Result{restarts(0)}, []verdict.Result{restarts(0)}, false, math.NaN()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var runs []compare.Run
			for i, v := range c.old {
				runs = append(runs, run("old"+string(rune('1'+i)), scenario("pod-delete", v)))
			}
			runs = append(runs, run("new", scenario("pod-delete", c.new...)))
			cmp, err := compare.Compare(runs, c.th)
			if err != nil {
				t.Fatal(err)
			}
			v := verdictOf(t, cmp, "pod-delete/good", c.new[0].Rule)
			q := v.Quantity
			if q == nil {
				t.Fatal("no quantity")
			}
			if q.Drift != c.drift {
				t.Errorf("drift %v, want %v (consumed %v)", q.Drift, c.drift, q.Consumed)
			}
			switch {
			case math.IsNaN(c.consumed) && q.Consumed != nil:
				t.Errorf("consumed %v, want none", *q.Consumed)
			case !math.IsNaN(c.consumed) && (q.Consumed == nil || math.Abs(*q.Consumed-c.consumed) > 1e-6):
				t.Errorf("consumed %v, want %v", q.Consumed, c.consumed)
			}
			if want := 0; c.drift {
				want = 1
				if cmp.Regressions != want || cmp.Drifts != want {
					t.Errorf("regressions %d, drifts %d, want %d", cmp.Regressions, cmp.Drifts, want)
				}
			} else if cmp.Regressions != 0 {
				t.Errorf("regressions %d, want 0", cmp.Regressions)
			}
		})
	}
}

func TestCompareFlagsStatusChanges(t *testing.T) {
	def, _ := compare.ParseThresholds(nil)
	inconclusive := verdict.Result{Rule: "recovery-within", Status: verdict.Inconclusive}
	cases := []struct {
		name             string
		old, new         verdict.Result
		changed, newFail bool
		regressions      int
	}{
		{"PASS → FAIL", recovery(verdict.Pass, 7.6), recovery(verdict.Fail, 16), true, true, 1},
		{"FAIL → PASS", recovery(verdict.Fail, 16), recovery(verdict.Pass, 7.6), true, false, 0},
		{"FAIL → FAIL", recovery(verdict.Fail, 16), recovery(verdict.Fail, 17), false, false, 0},
		{"PASS → INCONCLUSIVE", recovery(verdict.Pass, 7.6), inconclusive, true, false, 0},
		// A new FAIL that also used up its headroom counts once.
		{"0 → 1 unexpected restart", restarts(0), restarts(1), true, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmp, err := compare.Compare([]compare.Run{run("old", scenario("db-slowness", c.old)), run("new", scenario("db-slowness", c.new))}, def)
			if err != nil {
				t.Fatal(err)
			}
			v := verdictOf(t, cmp, "db-slowness/good", c.new.Rule)
			if v.StatusChanged != c.changed || v.NewFail != c.newFail || cmp.Regressions != c.regressions {
				t.Errorf("changed %v newFail %v regressions %d, want %v %v %d", v.StatusChanged, v.NewFail, cmp.Regressions, c.changed, c.newFail, c.regressions)
			}
			if s := cmp.Scenarios[0]; s.StatusChanged != (c.old.Status != c.new.Status) {
				t.Errorf("scenario status %v, changed %v", s.Status, s.StatusChanged)
			}
		})
	}
}

func TestCompareListsScenariosOfOneSide(t *testing.T) {
	def, _ := compare.ParseThresholds(nil)
	old := run("old", scenario("pod-delete", lead(verdict.Pass, 5)), scenario("db-slowness", recovery(verdict.Pass, 7)))
	new := run("new", scenario("pod-delete", lead(verdict.Pass, 5)), scenario("node-loss", recovery(verdict.Fail, 70)))
	cmp, err := compare.Compare([]compare.Run{old, new}, def)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cmp.OnlyOld, ",") != "db-slowness/good" || strings.Join(cmp.OnlyNew, ",") != "node-loss/good" {
		t.Errorf("only old %v, only new %v", cmp.OnlyOld, cmp.OnlyNew)
	}
	if len(cmp.Scenarios) != 1 || cmp.Regressions != 0 {
		t.Errorf("scenarios %d, regressions %d: a scenario of one side is listed, not judged", len(cmp.Scenarios), cmp.Regressions)
	}
	var out bytes.Buffer
	if err := compare.WriteText(&out, cmp); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"only in the old runs: db-slowness/good", "only in the new run: node-loss/good"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
}

// A report written before verdicts carried measures compares by status only, and says why.
func TestCompareOldReportWithoutMeasures(t *testing.T) {
	def, _ := compare.ParseThresholds(nil)
	bare := recovery(verdict.Pass, 0)
	bare.Measure = nil
	cmp, err := compare.Compare([]compare.Run{run("old", scenario("db-slowness", bare)), run("new", scenario("db-slowness", recovery(verdict.Pass, 9)))}, def)
	if err != nil {
		t.Fatal(err)
	}
	q := verdictOf(t, cmp, "db-slowness/good", "recovery-within").Quantity
	if q == nil || q.Drift || q.Change != nil || !strings.Contains(q.Note, "no old run recorded a measure") {
		t.Errorf("quantity %+v", q)
	}
}

func TestCompareLatencyFlaggedOnlyWithAThreshold(t *testing.T) {
	withP99 := func(path string, p99 time.Duration) compare.Run {
		s := scenario("pod-delete", lead(verdict.Pass, 5))
		s.Summary = &reports.Summary{Requests: reports.RequestFigures{P99: p99}}
		return run(path, s)
	}
	runs := []compare.Run{withP99("old", 20*time.Millisecond), withP99("new", 40*time.Millisecond)}
	def, _ := compare.ParseThresholds(nil)
	cmp, _ := compare.Compare(runs, def)
	if q := cmp.Scenarios[0].Latency; q == nil || q.Drift || *q.Change != 20 {
		t.Errorf("latency %+v without a p99 threshold", q)
	}
	th, _ := compare.ParseThresholds([]string{"p99=50"})
	cmp, _ = compare.Compare(runs, th)
	if q := cmp.Scenarios[0].Latency; q == nil || !q.Drift || cmp.Regressions != 1 {
		t.Errorf("latency %+v with p99=50%%", q)
	}
}

func TestParseThresholds(t *testing.T) {
	th, err := compare.ParseThresholds([]string{"30", "recovery-within=50%", "p99=100"})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := th.For("terminating-before-exit"); d != 0.3 {
		t.Errorf("default %v", d)
	}
	if r, _ := th.For("recovery-within"); r != 0.5 {
		t.Errorf("recovery-within %v", r)
	}
	if got := th.String(); got != "30%; p99 100%; recovery-within 50%" {
		t.Errorf("String %q", got)
	}
	for _, bad := range []string{"0", "-5", "lots", "recovery=20", "recovery-within=", "=20"} {
		if _, err := compare.ParseThresholds([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	var good bytes.Buffer
	if err := reports.WriteJSON(&good, run("", scenario("pod-delete", lead(verdict.Pass, 5))).Report); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "run/report.json", good.String())
	cases := map[string]struct{ path, want string }{
		"missing":        {filepath.Join(dir, "nothing.json"), "no such file"},
		"empty run dir":  {filepath.Dir(writeFile(t, dir, "empty/x", "")), "report.json: no such file"},
		"not a report":   {writeFile(t, dir, "other.json", `{"name": "x"}`), "unknown field"},
		"not json":       {writeFile(t, dir, "junit.xml", `<testsuites/>`), "decode report"},
		"schema too new": {writeFile(t, dir, "future.json", `{"schemaVersion": 99, "scenarios": [{"name": "x", "verdicts": []}]}`), "newer than this probegate understands"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := compare.Load(c.path)
			var ie *compare.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want a one-line input error containing %q", err, c.want)
			}
		})
	}
	for _, p := range []string{filepath.Join(dir, "run"), filepath.Join(dir, "run", "report.json")} {
		r, err := compare.Load(p)
		if err != nil || r.Path != filepath.Join(dir, "run", "report.json") {
			t.Errorf("load %s: %v (%s)", p, err, r.Path)
		}
	}
}

func TestJSONAndTextAgree(t *testing.T) {
	def, _ := compare.ParseThresholds(nil)
	cmp, err := compare.Compare([]compare.Run{
		run("night1", scenario("pod-delete", lead(verdict.Pass, 5.4), recovery(verdict.Pass, 7.6))),
		run("night2", scenario("pod-delete", lead(verdict.Pass, 2.3), recovery(verdict.Fail, 16))),
	}, def)
	if err != nil {
		t.Fatal(err)
	}
	var js, text bytes.Buffer
	if err := compare.WriteJSON(&js, cmp); err != nil {
		t.Fatal(err)
	}
	var back compare.Comparison
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Regressions != 2 || back.NewFails != 1 || back.Drifts != 2 {
		t.Errorf("json read back %+v (%v)", back, err)
	}
	if err := compare.WriteText(&text, cmp); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"withdrawal lead before exit", "5.4s → 2.3s", "-3.1s, 91% of the headroom", "≥ 2s", "DRIFT",
		"PASS → FAIL", "NEW FAIL, DRIFT", "2 regressions (1 new FAIL, 2 drifts)",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

func TestWriteHTML(t *testing.T) {
	def, _ := compare.ParseThresholds(nil)
	cmp, err := compare.Compare([]compare.Run{
		run("_out/night1/report.json", scenario("pod-delete", lead(verdict.Pass, 5.4), recovery(verdict.Pass, 7.6)), scenario("gone")),
		run("_out/night2/report.json", scenario("pod-delete", lead(verdict.Pass, 2.3), recovery(verdict.Fail, 16))),
	}, def)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := compare.WriteHTML(&out, cmp); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	for _, want := range []string{
		"<svg", `class="drift"`, `class="bound"`, "<title>5.4s</title>", "<title>2.3s</title>",
		"NEW FAIL, DRIFT", "Only in the old runs: gone/good", "_out/night2/report.json",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, external := range []string{"<script src", "<link", "http://", "https://"} {
		if strings.Contains(page, external) {
			t.Errorf("page is not self-contained: %q", external)
		}
	}
}
