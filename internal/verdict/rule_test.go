package verdict_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

func TestRegistryListsEveryRule(t *testing.T) {
	want := []string{
		"failed-requests-budget", "liveness-restart-in-window", "min-ready-endpoints", "no-endpoint-churn", "no-forced-kill",
		"no-liveness-restarts", "no-traffic-after-withdrawal", "no-unexpected-restarts", "readiness-withdrawn-in-window",
		"ready-in-every-zone", "recovery-within", "sheds-excess-load", "startup-not-killed", "terminating-before-exit",
		"withdrawn-after-node-loss",
	}
	if got := verdict.Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Names() = %q\nwant %q", got, want)
	}
	for _, r := range verdict.Rules() {
		if r.Doc == "" || r.Title == "" {
			t.Errorf("rule %s lacks doc or title", r.Name)
		}
		for _, p := range r.Params {
			if p.Doc == "" || p.Kind == "" {
				t.Errorf("rule %s param %s lacks doc or kind", r.Name, p.Name)
			}
		}
	}
}

func TestCheckParams(t *testing.T) {
	tests := []struct {
		rule   string
		params map[string]string
		want   string // "" = valid
	}{
		{"min-ready-endpoints", map[string]string{"min": "2"}, ""},
		{"min-ready-endpoints", nil, ""},
		{"no-such-rule", nil, `unknown verdict rule "no-such-rule" (known: failed-requests-budget,`},
		{"min-ready-endpoints", map[string]string{"minimum": "2"}, `rule min-ready-endpoints has no parameter "minimum" (it takes: min, grace, rollout-floor)`},
		{"min-ready-endpoints", map[string]string{"min": "two"}, `parameter min: want int, got "two"`},
		{"min-ready-endpoints", map[string]string{"min": "-1"}, "must not be negative"},
		{"failed-requests-budget", map[string]string{"max-ratio": "0.01", "allowance": "1500ms"}, ""},
		{"failed-requests-budget", map[string]string{"allowance": "soon"}, `want duration, got "soon"`},
		{"no-forced-kill", map[string]string{"expected": "yes"}, `want bool, got "yes"`},
		{"no-liveness-restarts", map[string]string{"pods": "a, b"}, ""},
	}
	for _, tc := range tests {
		err := verdict.CheckParams(tc.rule, tc.params)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %v: unexpected error %v", tc.rule, tc.params, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %v: err = %v, want %q", tc.rule, tc.params, err, tc.want)
		}
	}
	// Evaluate refuses bad parameters instead of judging with defaults.
	if _, err := verdict.Evaluate(vt.New().Input(), verdict.Spec{Rule: "min-ready-endpoints", Params: map[string]string{"min": "x"}}); err == nil {
		t.Error("Evaluate accepted an invalid parameter")
	}
}

func TestParams(t *testing.T) {
	p := verdict.Params{"n": "3", "f": "1.5", "d": "2.5", "d2": "750ms", "b": "true", "l": " a, ,b "}
	if p.Int("n", 0) != 3 || p.Int("missing", 7) != 7 || p.Float("f", 0) != 1.5 || p.Bool("b", false) != true {
		t.Error("scalar getters wrong")
	}
	if p.Duration("d", 0) != 2500*time.Millisecond || p.Duration("d2", 0) != 750*time.Millisecond || p.Duration("x", time.Second) != time.Second {
		t.Error("duration getters wrong")
	}
	if got := p.List("l"); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("List = %q", got)
	}
}

func TestFaultWindows(t *testing.T) {
	b := vt.New().Ready(0, "a", "b").
		Inject(5*s, "stall", "a").Revert(8*s, "stall", "a").
		Inject(10*s, "stall", "a").Revert(12*s, "stall", "a").
		Inject(15*s, "db-latency", "").
		Skip(16*s, "freeze", "no admin endpoint")
	// A fault entry naming the pod only in Target.
	b.Entry(timeline.Entry{T: 20 * s, Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: "pod-delete", Action: timeline.FaultInject, Target: "b"}})
	// A fault naming its pod in params, reverted by an entry without target.
	b.Entry(timeline.Entry{T: 25 * s, Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: "freeze", Action: timeline.FaultInject,
		Target: "target", Params: map[string]string{"pod": "pod/a"}}})
	b.Entry(timeline.Entry{T: 28 * s, Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: "freeze", Action: timeline.FaultRevert}})
	got := timeline.FaultWindows(b.Entries())
	if len(got) != 6 {
		t.Fatalf("%d windows, want 6: %+v", len(got), got)
	}
	check := func(i int, typ string, start, end time.Duration, reverted bool, pods []string) {
		t.Helper()
		w := got[i]
		if w.Type != typ || w.Start != start || w.End != end || w.Reverted != reverted || !reflect.DeepEqual(w.Pods, pods) {
			t.Errorf("window %d = %+v, want %s %s–%s reverted=%v pods %v", i, w, typ, start, end, reverted, pods)
		}
	}
	check(0, "stall", 5*s, 8*s, true, []string{"a"})
	check(1, "stall", 10*s, 12*s, true, []string{"a"})
	check(2, "db-latency", 15*s, 15*s, false, nil)
	check(3, "freeze", 16*s, 16*s, false, nil)
	check(4, "pod-delete", 20*s, 20*s, false, []string{"b"})
	check(5, "freeze", 25*s, 28*s, true, []string{"a"})
	if !got[3].Skipped || got[3].SkipNote != "no admin endpoint" {
		t.Errorf("skip window = %+v", got[3])
	}
}

func TestFaultParamSelectsFaults(t *testing.T) {
	// Two faults: a stall on a that is followed by a restart, and a db fault. Judging only the stall passes.
	run := base().Inject(5*s, "db-latency", "").Revert(8*s, "db-latency", "").
		Inject(10*s, "stall", "a").Restart(20*s, "a", timeline.CauseLiveness)
	res, err := verdict.Evaluate(run.Input(), verdict.Spec{Rule: "liveness-restart-in-window", Params: map[string]string{"fault": "stall"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != verdict.Pass {
		t.Errorf("with fault=stall: %s %s", res.Status, res.Observed)
	}
	res, _ = verdict.Evaluate(run.Input(), verdict.Spec{Rule: "liveness-restart-in-window"})
	if res.Status != verdict.Fail {
		t.Errorf("judging every fault (the db fault names no pod) should fail, got %s %s", res.Status, res.Observed)
	}
}

func TestResultJSONRoundTrip(t *testing.T) {
	run := base().Inject(10*s, "stall", "a").NotReady(17*s, "a")
	var results []verdict.Result
	for _, spec := range []verdict.Spec{{Rule: "readiness-withdrawn-in-window"}, {Rule: "no-liveness-restarts"}} {
		res, err := verdict.Evaluate(run.Input(), spec)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	if len(results) != 2 || results[0].Status != verdict.Fail || results[1].Status != verdict.Pass {
		t.Fatalf("results = %+v", results)
	}
	if len(results[0].Windows) != 1 || results[0].Windows[0].From != 11*s || results[0].Windows[0].To != 15*s || results[0].Windows[0].Pod != "a" {
		t.Errorf("windows = %+v, want a: 11s–15s", results[0].Windows)
	}
	data, err := json.Marshal(results)
	if err != nil {
		t.Fatal(err)
	}
	var back []verdict.Result
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, results) {
		t.Errorf("round trip changed results:\n%s", data)
	}
	if !strings.Contains(results[0].Expected, "F=2 × P=1s") {
		t.Errorf("expected %q does not explain the window", results[0].Expected)
	}
}

func TestLivenessRestartExplainedByProbeFailure(t *testing.T) {
	run := base().ProbeFailed(18*s, "b", timeline.ProbeLiveness, "Liveness probe failed: Get \"http://10.244.0.7:8080/health/live\": context deadline exceeded").
		Restart(20*s, "b", timeline.CauseLiveness)
	res, err := verdict.Evaluate(run.Input(), verdict.Spec{Rule: "no-liveness-restarts"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != verdict.Fail || len(res.Evidence) != 2 || !strings.Contains(res.Evidence[1].Note, "context deadline exceeded") || res.Evidence[1].T != 18*s {
		t.Errorf("evidence = %+v", res.Evidence)
	}
}

func TestUnsortedInputIsSorted(t *testing.T) {
	in := base().Inject(10*s, "stall", "a").NotReady(13*s, "a").Input()
	// Reverse the entries: rules must not depend on the caller's order.
	for i, j := 0, len(in.Entries)-1; i < j; i, j = i+1, j-1 {
		in.Entries[i], in.Entries[j] = in.Entries[j], in.Entries[i]
	}
	res, err := verdict.Evaluate(in, verdict.Spec{Rule: "readiness-withdrawn-in-window"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != verdict.Pass {
		t.Errorf("reversed entries: %s %s", res.Status, res.Observed)
	}
}
