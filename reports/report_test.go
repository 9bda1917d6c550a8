package reports_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/reports/reportstest"
)

func TestJSONRoundTrip(t *testing.T) {
	r := reportstest.SampleReport(10)
	var buf bytes.Buffer
	if err := reports.WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	got, err := reports.ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.SchemaVersion != reports.SchemaVersion {
		t.Errorf("schemaVersion = %d", got.SchemaVersion)
	}
	for i := range r.Scenarios {
		w, g := r.Scenarios[i], got.Scenarios[i]
		w.Timeline, w.Requests = nil, nil
		if !reflect.DeepEqual(w.Verdicts, g.Verdicts) || !reflect.DeepEqual(w.Oracle, g.Oracle) ||
			!reflect.DeepEqual(w.Summary, g.Summary) || w.Seed != g.Seed || w.Variant != g.Variant || !w.Started.Equal(g.Started) {
			t.Errorf("scenario %d changed in the round trip:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func TestReadJSONRejectsBadReports(t *testing.T) {
	cases := map[string]struct{ json, want string }{
		"not json":        {`{"schemaVersion": 1, "scen`, "decode report"},
		"no version":      {`{"scenarios": [{"name": "x", "verdicts": []}]}`, "no schemaVersion"},
		"newer version":   {`{"schemaVersion": 99, "scenarios": [{"name": "x", "verdicts": []}]}`, "newer"},
		"unknown field":   {`{"schemaVersion": 1, "tests": 3, "scenarios": [{"name": "x", "verdicts": []}]}`, "unknown field"},
		"no scenarios":    {`{"schemaVersion": 1, "scenarios": []}`, "no scenarios"},
		"unnamed":         {`{"schemaVersion": 1, "scenarios": [{"verdicts": []}]}`, "no name"},
		"escaping path":   {`{"schemaVersion": 1, "scenarios": [{"name": "x", "verdicts": [], "timelinePath": "../../etc/passwd"}]}`, "leaves the report directory"},
		"absolute path":   {`{"schemaVersion": 1, "scenarios": [{"name": "x", "verdicts": [], "requestsPath": "/etc/passwd"}]}`, "leaves the report directory"},
		"unknown verdict": {`{"schemaVersion": 1, "scenarios": [{"name": "x", "verdicts": [{"rule": "r", "status": "MAYBE"}]}]}`, "unknown status"},
		// A FAIL must not hide behind notApplicable (which decides the scenario's status).
		"fail in a not applicable scenario": {`{"schemaVersion": 3, "scenarios": [{"name": "x", "notApplicable": "no dependency", "verdicts": [{"rule": "r", "status": "FAIL"}]}]}`, "judges nothing"},
		"not applicable without why":        {`{"schemaVersion": 3, "scenarios": [{"name": "x", "verdicts": [{"rule": "r", "status": "NOT APPLICABLE"}]}]}`, "says not why"},
		"measure direction":                 {`{"schemaVersion": 5, "scenarios": [{"name": "x", "verdicts": [{"rule": "r", "status": "PASS", "measure": {"name": "n", "value": 1, "unit": "s", "bound": 2, "direction": "up"}}]}]}`, "neither max nor min"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := reports.ReadJSON(strings.NewReader(c.json))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want one containing %q", err, c.want)
			}
		})
	}
}

// results are verdicts of rule "r" with these statuses.
func results(st ...verdict.Status) []verdict.Result {
	var out []verdict.Result
	for _, s := range st {
		out = append(out, verdict.Result{Rule: "r", Status: s})
	}
	return out
}

func TestStatusAndExitCode(t *testing.T) {
	res := results
	cases := []struct {
		name      string
		scenarios []reports.ScenarioReport
		want      int
	}{
		{"all pass", []reports.ScenarioReport{{Name: "a", Verdicts: res(verdict.Pass, verdict.Pass)}}, reports.ExitPass},
		{"one fail", []reports.ScenarioReport{{Name: "a", Verdicts: res(verdict.Pass)}, {Name: "b", Verdicts: res(verdict.Pass, verdict.Fail)}}, reports.ExitFail},
		{"fail beats inconclusive", []reports.ScenarioReport{{Name: "a", Verdicts: res(verdict.Inconclusive)}, {Name: "b", Verdicts: res(verdict.Fail)}}, reports.ExitFail},
		{"harness error", []reports.ScenarioReport{{Name: "a", Verdicts: res(verdict.Fail)}, {Name: "b", Error: "deploy failed"}}, reports.ExitError},
		{"nothing ran", nil, reports.ExitError},
		// Problem 1 of issue 11: PASS + a skipped fault's verdict, or only such verdicts, used to exit 0.
		{"pass and inconclusive", []reports.ScenarioReport{{Name: "a", Verdicts: res(verdict.Pass, verdict.Inconclusive)}}, reports.ExitInconclusive},
		{"all inconclusive", []reports.ScenarioReport{{Name: "a", Verdicts: res(verdict.Inconclusive)}}, reports.ExitInconclusive},
		{"no verdict at all", []reports.ScenarioReport{{Name: "a"}}, reports.ExitInconclusive},
		// Not applicable scenarios count for nothing: a target that takes some scenarios and
		// passes them exits 0; one that takes none has shown nothing (3).
		{"pass and not applicable", []reports.ScenarioReport{{Name: "a", Verdicts: res(verdict.Pass)},
			{Name: "db", NotApplicable: "no dependency", Verdicts: res(verdict.NotApplicable)}}, reports.ExitPass},
		{"fail and not applicable", []reports.ScenarioReport{{Name: "a", Verdicts: res(verdict.Fail)},
			{Name: "db", NotApplicable: "no dependency", Verdicts: res(verdict.NotApplicable)}}, reports.ExitFail},
		{"only not applicable", []reports.ScenarioReport{{Name: "db", NotApplicable: "no dependency", Verdicts: res(verdict.NotApplicable)}}, reports.ExitInconclusive},
	}
	for _, c := range cases {
		r := &reports.Report{Scenarios: c.scenarios}
		if got := r.ExitCode(); got != c.want {
			t.Errorf("%s: exit code %d, want %d", c.name, got, c.want)
		}
	}
	sc := reports.ScenarioReport{Verdicts: res(verdict.Inconclusive, verdict.Pass, verdict.Fail)}
	if sc.Status() != verdict.Fail {
		t.Errorf("status = %s, want FAIL", sc.Status())
	}
	sc = reports.ScenarioReport{Verdicts: res(verdict.Pass, verdict.Inconclusive)}
	if sc.Status() != verdict.Inconclusive {
		t.Errorf("status = %s, want INCONCLUSIVE", sc.Status())
	}
}

// TestDecided: the decided rate counts PASS and FAIL over the verdicts of applicable scenarios; an
// errored or verdictless scenario is one undecided verdict, a NOT APPLICABLE one is left out.
func TestDecided(t *testing.T) {
	v := results
	r := &reports.Report{Scenarios: []reports.ScenarioReport{
		{Name: "a", Verdicts: v(verdict.Pass, verdict.Fail, verdict.Inconclusive)},
		{Name: "b", Verdicts: v(verdict.Pass)},
		{Name: "db", NotApplicable: "no dependency", Verdicts: v(verdict.NotApplicable, verdict.NotApplicable)},
		{Name: "c", Error: "deploy failed"},
		{Name: "d"},
	}}
	if d, a := r.Decided(); d != 3 || a != 6 {
		t.Errorf("Decided() = %d of %d, want 3 of 6", d, a)
	}
}

// A schemaVersion 1 report still reads; its SKIP verdicts become INCONCLUSIVE and it exits 3.
func TestReadV1SkipAsInconclusive(t *testing.T) {
	v1 := `{"schemaVersion":1,"probegateVersion":"x","kubernetesVersion":"v1.34.4","started":"2026-01-01T00:00:00Z",
"finished":"2026-01-01T00:01:00Z","scenarios":[{"name":"db-slowness","seed":1,"started":"2026-01-01T00:00:00Z",
"finished":"2026-01-01T00:01:00Z","verdicts":[{"rule":"no-liveness-restarts","title":"t","status":"PASS","expected":"e","observed":"o"},
{"rule":"readiness-withdrawn-in-window","title":"t","status":"SKIP","expected":"e","observed":"fault skipped: no toxiproxy"}]}]}`
	r, err := reports.ReadJSON(strings.NewReader(v1))
	if err != nil {
		t.Fatal(err)
	}
	v := r.Scenarios[0].Verdicts[1]
	if v.Status != verdict.Inconclusive || len(v.Unshown) == 0 || !strings.Contains(v.Unshown[0], "no toxiproxy") {
		t.Fatalf("v1 SKIP read as %s %q", v.Status, v.Unshown)
	}
	if r.ExitCode() != reports.ExitInconclusive {
		t.Errorf("exit code %d, want %d", r.ExitCode(), reports.ExitInconclusive)
	}
	v2 := strings.Replace(v1, `"schemaVersion":1`, `"schemaVersion":2`, 1)
	if _, err := reports.ReadJSON(strings.NewReader(v2)); err == nil || !strings.Contains(err.Error(), "SKIP") {
		t.Errorf("a schemaVersion 2 report with SKIP: err %v, want one naming SKIP", err)
	}
}

// A schemaVersion 3 report, written before verdicts carried a measure, still reads: its verdicts
// have none.
func TestReadV3WithoutMeasures(t *testing.T) {
	v3 := `{"schemaVersion":3,"probegateVersion":"x","kubernetesVersion":"v1.34.4","started":"2026-01-01T00:00:00Z",
"finished":"2026-01-01T00:01:00Z","scenarios":[{"name":"pod-delete","seed":1,"started":"2026-01-01T00:00:00Z",
"finished":"2026-01-01T00:01:00Z","verdicts":[{"rule":"recovery-within","title":"t","status":"PASS","expected":"e","observed":"o",
"figures":{"recovery_s":7.6}}]}]}`
	r, err := reports.ReadJSON(strings.NewReader(v3))
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Scenarios[0].Verdicts[0]; v.Measure != nil || r.SchemaVersion != reports.SchemaVersion {
		t.Errorf("v3 read as version %d with measure %+v", r.SchemaVersion, v.Measure)
	}
}

func TestWriteAllThenLoadDir(t *testing.T) {
	dir := t.TempDir()
	r := reportstest.SampleReport(20)
	want := reportstest.SampleReport(20)
	r.Scenarios[1].Summary = nil // WriteAll computes a missing summary
	if err := reports.WriteAll(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.json", "junit.xml", "report.html",
		"scenarios/db-slow-bad-liveness-db/timeline.jsonl", "scenarios/db-slow-bad-liveness-db/requests.jsonl",
		"scenarios/pod-delete-good/timeline.jsonl", "scenarios/pod-delete-good/requests.jsonl"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
	got, err := reports.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Scenarios {
		w, g := &want.Scenarios[i], &got.Scenarios[i]
		if g.Timeline == nil || g.Timeline.Len() != w.Timeline.Len() {
			t.Errorf("scenario %s: timeline not reloaded whole", w.Name)
		}
		if len(g.Requests) != len(w.Requests) || g.Requests[len(g.Requests)-1] != w.Requests[len(w.Requests)-1] {
			t.Errorf("scenario %s: requests not reloaded whole", w.Name)
		}
		if !reflect.DeepEqual(g.Summary, w.Summary) {
			t.Errorf("scenario %s: summary\n got %+v\nwant %+v", w.Name, g.Summary, w.Summary)
		}
		if !reflect.DeepEqual(g.Verdicts, w.Verdicts) {
			t.Errorf("scenario %s: verdicts differ", w.Name)
		}
	}
}

func TestLoadDirErrors(t *testing.T) {
	good := t.TempDir()
	if err := reports.WriteAll(good, reportstest.SampleReport(5)); err != nil {
		t.Fatal(err)
	}
	corruptTimeline := t.TempDir()
	if err := reports.WriteAll(corruptTimeline, reportstest.SampleReport(5)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corruptTimeline, "scenarios/pod-delete-good/timeline.jsonl"), []byte("{\"kind\":\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missingRequests := t.TempDir()
	if err := reports.WriteAll(missingRequests, reportstest.SampleReport(5)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(missingRequests, "scenarios/db-slow-bad-liveness-db/requests.jsonl")); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	garbage := t.TempDir()
	if err := os.WriteFile(filepath.Join(garbage, "report.json"), []byte("<html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ dir, want string }{
		"missing dir":      {filepath.Join(good, "nope"), "does not exist"},
		"not a dir":        {file, "not a directory"},
		"no report.json":   {empty, "no report.json"},
		"garbage json":     {garbage, "decode report"},
		"corrupt timeline": {corruptTimeline, "timeline line 1"},
		"missing requests": {missingRequests, "requests"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := reports.LoadDir(c.dir)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error = %v, want one line containing %q", err, c.want)
			}
		})
	}
	if _, err := reports.LoadDir(good); err != nil {
		t.Fatalf("good dir: %v", err)
	}
}

func TestWriteAllRejectsInvalidReport(t *testing.T) {
	dir := t.TempDir()
	err := reports.WriteAll(dir, &reports.Report{})
	if err == nil || !strings.Contains(err.Error(), "no scenarios") {
		t.Fatalf("error = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.json")); err == nil {
		t.Error("report.json written for an invalid report")
	}
}

func TestPlacedWindowsMergeVerdictAndScenarioWindows(t *testing.T) {
	w := func(name, pod string, from, to int) verdict.Window {
		return verdict.Window{Name: name, Pod: pod, From: time.Duration(from) * time.Second, To: time.Duration(to) * time.Second}
	}
	sc := reports.ScenarioReport{
		Windows: []verdict.Window{w("budget", "", 50, 60)},
		Verdicts: []verdict.Result{
			{Rule: "a", Status: verdict.Pass, Windows: []verdict.Window{w("withdrawal", "p1", 10, 15), w("budget", "", 50, 60)}},
			{Rule: "b", Status: verdict.Fail, Windows: []verdict.Window{w("withdrawal", "p1", 10, 15), w("withdrawal", "p2", 10, 15)}},
		},
	}
	got := sc.PlacedWindows()
	if len(got) != 3 {
		t.Fatalf("windows = %+v, want 3 (duplicates merged)", got)
	}
	p1, p2, budget := got[0], got[1], got[2]
	if p1.Pod != "p1" || strings.Join(p1.Rules, ",") != "a,b" || !p1.Failed || p1.Extra {
		t.Errorf("p1 window = %+v", p1)
	}
	if p2.Pod != "p2" || strings.Join(p2.Rules, ",") != "b" || !p2.Failed {
		t.Errorf("p2 window = %+v", p2)
	}
	if budget.Name != "budget" || !budget.Extra || budget.Failed || strings.Join(budget.Rules, ",") != "a" {
		t.Errorf("budget window = %+v", budget)
	}
}
