package verify

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

func TestPlanRerunsExactlyTheMotivatingRuns(t *testing.T) {
	p := plan(t, noStartupProbeColdStart(t), noStartupProbeOverload(t), shortGracePodDelete(t), deepLivenessDBSlowness(t))
	if len(p.Workloads) != 3 {
		t.Fatalf("%d workloads, want one per variant", len(p.Workloads))
	}

	// no-startup-probe: the startup probe and liveness's dropped delay, from cold-start only (the
	// overload run measured nothing that changed), with the recorded seed and variant.
	w := workload(t, p, "no-startup-probe")
	if len(w.Reruns) != 1 || w.Reruns[0].Label != "cold-start/no-startup-probe" || w.Reruns[0].Scenario.Seed != 105 ||
		w.Reruns[0].Scenario.Target.Variant != "no-startup-probe" || w.Variant != "no-startup-probe" {
		t.Fatalf("reruns %+v, want cold-start/no-startup-probe seed 105 alone", w.Reruns)
	}
	if bundled["cold-start"].Seed != 1 || bundled["cold-start"].Target.Variant != "good" {
		t.Error("the catalogue's scenario was changed: plans must copy it")
	}
	for _, f := range []string{"startupProbe", "livenessProbe.initialDelaySeconds"} {
		if c := change(t, w, f); !c.Applied || len(c.Reruns) != 1 {
			t.Errorf("%s: applied %v, reruns %v (%s)", f, c.Applied, c.Reruns, c.Why)
		}
	}
	for _, want := range []string{"startupProbe:", "path: /health/live", "initialDelaySeconds: 0", "name: target"} {
		if !strings.Contains(string(w.Patch), want) {
			t.Errorf("no-startup-probe patch lacks %q:\n%s", want, w.Patch)
		}
	}
	if c := change(t, w, "readinessProbe.timeoutSeconds"); c.Applied || c.Outcome != Unverifiable || !strings.Contains(c.Why, "left it alone") {
		t.Errorf("readiness timeout: %+v", c)
	}

	// short-grace: the grace period is verified on pod-delete-under-load; the withdrawal delay is
	// the app's own and is not applied.
	w = workload(t, p, "short-grace")
	if c := change(t, w, "terminationGracePeriodSeconds"); !c.Applied || w.Reruns[c.Reruns[0]].Label != "pod-delete-under-load/short-grace" {
		t.Errorf("grace: %+v", c)
	}
	wd := change(t, w, "lifecycle.preStop (withdrawal delay)")
	if wd.Rec.Status != "change" || wd.Applied || wd.Outcome != NotApplied || !strings.Contains(wd.Why, "app's own") {
		t.Errorf("withdrawal: status %s applied %v %s: %s", wd.Rec.Status, wd.Applied, wd.Outcome, wd.Why)
	}
	if strings.Contains(string(w.Patch), "preStop") || !strings.Contains(string(w.Patch), "terminationGracePeriodSeconds") {
		t.Errorf("short-grace patch:\n%s", w.Patch)
	}

	// deep-liveness: the handler is refused, and so is the longer liveness fuse tune computed:
	// nothing is applied or re-run.
	w = workload(t, p, "deep-liveness")
	if c := change(t, w, "livenessProbe (handler)"); c.Outcome != Refused || !strings.Contains(c.Why, "the handler is wrong, not the numbers") {
		t.Errorf("handler: %+v", c)
	}
	f := change(t, w, "livenessProbe.failureThreshold")
	if f.Rec.Status != "change" || f.Applied || f.Outcome != Refused {
		t.Errorf("liveness failureThreshold: tune %s, applied %v, %s: %s", f.Rec.Status, f.Applied, f.Outcome, f.Why)
	}
	if w.Patch != nil || len(w.Reruns) != 0 {
		t.Errorf("deep-liveness: patch %q, reruns %d: want neither", w.Patch, len(w.Reruns))
	}
}

func TestPlanNeedsTheTargetFileForAUsersApp(t *testing.T) {
	r := noStartupProbeColdStart(t)
	r.Variant, r.Target = "", "target shop"
	w := plan(t, r).Workloads[0]
	if c := change(t, w, "startupProbe"); c.Applied || !strings.Contains(c.Why, "--target") {
		t.Errorf("without --target: %+v", c)
	}
	if w.Patch != nil {
		t.Errorf("patch %s", w.Patch)
	}
}

// fakeRerunner answers each scenario with the verdicts after[name], or fails.
type fakeRerunner struct {
	after   map[string][]verdict.Result
	errs    map[string]string
	patches map[string]string
}

func (f *fakeRerunner) Rerun(_ context.Context, w *Workload, scs []*scenario.Scenario) ([]reports.ScenarioReport, error) {
	if f.patches == nil {
		f.patches = map[string]string{}
	}
	var out []reports.ScenarioReport
	for _, sc := range scs {
		f.patches[sc.Name+"/"+sc.Target.Variant] = string(w.Patch)
		out = append(out, reports.ScenarioReport{Name: sc.Name, Variant: sc.Target.Variant, Verdicts: f.after[sc.Name], Error: f.errs[sc.Name]})
	}
	return out, nil
}

func passAll(rules ...string) []verdict.Result {
	var out []verdict.Result
	for _, r := range rules {
		out = append(out, v(r, verdict.Pass))
	}
	return out
}

func TestRunConcludesEachChangeAndTheExitCode(t *testing.T) {
	cases := []struct {
		name      string
		after     map[string][]verdict.Result
		errs      map[string]string
		startup   Outcome
		grace     Outcome
		exit      int
		graceWhat string
	}{
		{name: "all pass", after: map[string][]verdict.Result{"cold-start": passAll(coldStartRules...), "pod-delete-under-load": passAll(podDeleteRules...)},
			startup: Fixed, grace: Fixed, exit: ExitPass, graceWhat: "no-forced-kill FAIL → PASS"},
		{name: "one still fails", after: map[string][]verdict.Result{"cold-start": passAll(coldStartRules...),
			"pod-delete-under-load": append(passAll(podDeleteRules[:3]...), v("no-forced-kill", verdict.Fail), v("recovery-within", verdict.Pass))},
			startup: Fixed, grace: NotFixed, exit: ExitFail, graceWhat: "pod-delete-under-load/short-grace: no-forced-kill"},
		{name: "inconclusive", after: map[string][]verdict.Result{"cold-start": passAll(coldStartRules...),
			"pod-delete-under-load": append(passAll(podDeleteRules[:4]...), v("recovery-within", verdict.Inconclusive))},
			startup: Fixed, grace: Inconclusive, exit: ExitInconclusive, graceWhat: "recovery-within"},
		// A re-run the target no longer takes verified nothing: never "fixed", never exit 0.
		{name: "not applicable after", after: map[string][]verdict.Result{"cold-start": passAll(coldStartRules...),
			"pod-delete-under-load": notApplicableAll(podDeleteRules...)},
			startup: Fixed, grace: Inconclusive, exit: ExitInconclusive, graceWhat: "no-forced-kill"},
		{name: "re-run error", after: map[string][]verdict.Result{"cold-start": passAll(coldStartRules...)},
			errs:    map[string]string{"pod-delete-under-load": "deploy target: timed out"},
			startup: Fixed, grace: Inconclusive, exit: ExitError, graceWhat: "timed out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := plan(t, noStartupProbeColdStart(t), shortGracePodDelete(t), deepLivenessDBSlowness(t))
			rr := &fakeRerunner{after: tc.after, errs: tc.errs}
			if err := Run(context.Background(), p, rr); err != nil {
				t.Fatal(err)
			}
			if got := p.ExitCode(); got != tc.exit {
				t.Errorf("exit %d, want %d", got, tc.exit)
			}
			if c := change(t, workload(t, p, "no-startup-probe"), "startupProbe"); c.Outcome != tc.startup {
				t.Errorf("startup probe: %s (%s), want %s", c.Outcome, c.Why, tc.startup)
			}
			g := change(t, workload(t, p, "short-grace"), "terminationGracePeriodSeconds")
			if g.Outcome != tc.grace || !strings.Contains(g.Why, tc.graceWhat) {
				t.Errorf("grace: %s (%s), want %s mentioning %q", g.Outcome, g.Why, tc.grace, tc.graceWhat)
			}
			if c := change(t, workload(t, p, "deep-liveness"), "livenessProbe (handler)"); c.Outcome != Refused {
				t.Errorf("deep liveness after the run: %s", c.Outcome)
			}
			if patch := rr.patches["cold-start/no-startup-probe"]; !strings.Contains(patch, "startupProbe") || strings.Contains(patch, "terminationGracePeriodSeconds") {
				t.Errorf("cold-start re-ran with the patch\n%s\nwant no-startup-probe's own", patch)
			}
			if _, ok := rr.patches["db-slowness/deep-liveness"]; ok {
				t.Error("db-slowness was re-run for a refused change")
			}
		})
	}
}

func TestRunSaysWhenNothingFailedBefore(t *testing.T) {
	r := noStartupProbeColdStart(t)
	r.Verdicts = passAll(coldStartRules...)
	p := plan(t, r)
	if err := Run(context.Background(), p, &fakeRerunner{after: map[string][]verdict.Result{"cold-start": passAll(coldStartRules...)}}); err != nil {
		t.Fatal(err)
	}
	if c := change(t, p.Workloads[0], "startupProbe"); c.Outcome != Holds {
		t.Errorf("%s: %s, want holds (no FAIL → PASS to claim)", c.Outcome, c.Why)
	}
	if p.ExitCode() != ExitPass {
		t.Errorf("exit %d", p.ExitCode())
	}
}

func TestNothingVerifiableIsInconclusive(t *testing.T) {
	p := plan(t, deepLivenessDBSlowness(t))
	rr := &fakeRerunner{}
	if err := Run(context.Background(), p, rr); err != nil {
		t.Fatal(err)
	}
	if len(rr.patches) != 0 || p.ExitCode() != ExitInconclusive {
		t.Errorf("re-ran %v, exit %d: want nothing run and exit 3", rr.patches, p.ExitCode())
	}
}

type brokenRerunner struct{}

func (brokenRerunner) Rerun(context.Context, *Workload, []*scenario.Scenario) ([]reports.ScenarioReport, error) {
	return nil, errors.New("write report: disk full")
}

func TestRunReportsARerunnerError(t *testing.T) {
	p := plan(t, noStartupProbeColdStart(t))
	if err := Run(context.Background(), p, brokenRerunner{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("err %v", err)
	}
}

func TestWriteTextSetsBeforeBesideAfter(t *testing.T) {
	p := plan(t, noStartupProbeColdStart(t), shortGracePodDelete(t), deepLivenessDBSlowness(t))
	rr := &fakeRerunner{after: map[string][]verdict.Result{"cold-start": passAll(coldStartRules...),
		"pod-delete-under-load": append(passAll(podDeleteRules[:3]...), v("no-forced-kill", verdict.Fail), v("recovery-within", verdict.Pass))}}
	if err := Run(context.Background(), p, rr); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, p); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Logf("\n%s", out)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	row := func(parts ...string) bool {
		for _, l := range lines {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(l, p)
			}
			if ok {
				return true
			}
		}
		return false
	}
	for _, want := range [][]string{
		{"cold-start/no-startup-probe (105)", "startup-not-killed", "FAIL → PASS"},
		{"min-ready-endpoints", "PASS → PASS"},
		{"pod-delete-under-load/short-grace (106)", "terminating-before-exit", "PASS → PASS"},
		{"no-forced-kill", "FAIL → FAIL"},
		{"startupProbe ", "fixed: cold-start/no-startup-probe: startup-not-killed FAIL → PASS, recovery-within FAIL → PASS"},
		{"startupProbe ", "fixed:"},
		{"terminationGracePeriodSeconds", "not fixed: still FAIL"},
		{"lifecycle.preStop (withdrawal delay)", "not applied:", "app's own"},
		{"livenessProbe (handler)", "refused:", "not the numbers"},
		{"livenessProbe.failureThreshold", "refused:"},
		{"verify deployment/target container target (fixture deep-liveness)"},
		{"applied: nothing"},
		{"terminationGracePeriodSeconds → "},
	} {
		if !row(want...) {
			t.Errorf("no line with %q", want)
		}
	}
}

// TestPatchTouchesOnlyProbeAndShutdownFields: what verify applies names the workload and sets
// probes, lifecycle and the grace period of the container under test, nothing else.
func TestPatchTouchesOnlyProbeAndShutdownFields(t *testing.T) {
	p := plan(t, noStartupProbeColdStart(t), shortGracePodDelete(t), deepLivenessDBSlowness(t))
	n := 0
	for _, w := range p.Workloads {
		if w.Patch == nil {
			continue
		}
		n++
		var doc map[string]any
		if err := yaml.Unmarshal(w.Patch, &doc); err != nil {
			t.Fatal(err)
		}
		podSpec := doc["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		for k, val := range podSpec {
			switch k {
			case "terminationGracePeriodSeconds":
			case "containers":
				for _, c := range val.([]any) {
					for ck := range c.(map[string]any) {
						if !slices.Contains([]string{"name", "startupProbe", "livenessProbe", "readinessProbe", "lifecycle"}, ck) {
							t.Errorf("%s patch sets container field %s", w.Target, ck)
						}
					}
				}
			default:
				t.Errorf("%s patch sets pod field %s", w.Target, k)
			}
		}
		if len(doc["spec"].(map[string]any)) != 1 || len(doc["metadata"].(map[string]any)) != 1 {
			t.Errorf("%s patch sets more than the pod template: %v", w.Target, doc)
		}
	}
	if n != 2 {
		t.Errorf("%d patches, want 2 (no-startup-probe, short-grace)", n)
	}
}

// notApplicableAll is every rule NOT APPLICABLE: a re-run the target does not take.
func notApplicableAll(rules ...string) []verdict.Result {
	out := make([]verdict.Result, len(rules))
	for i, r := range rules {
		out[i] = v(r, verdict.NotApplicable)
	}
	return out
}
