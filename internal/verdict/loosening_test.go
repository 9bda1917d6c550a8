package verdict_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/verdict"
)

// A parameter value that leaves its rule nothing to check is refused, whatever reason a scenario
// gives: each of these made a PASS that could not fail (min-withdrawn 0 passed with nothing
// withdrawn, require-withdrawal false with no withdrawal at all).
func TestVacuousParamsRefused(t *testing.T) {
	for _, c := range []struct{ rule, param, value string }{
		{"readiness-withdrawn-in-window", "min-withdrawn", "0"},
		{"min-ready-endpoints", "min", "0"},
		{"ready-in-every-zone", "min", "0"},
		{"recovery-within", "replicas", "0"},
		{"no-traffic-after-withdrawal", "require-withdrawal", "false"},
		{"terminating-before-exit", "min-lead", "0"},
		{"terminating-before-exit", "min-lead", "0s"},
	} {
		err := verdict.CheckParams(c.rule, map[string]string{c.param: c.value})
		if err == nil || !strings.Contains(err.Error(), c.param+"="+c.value+" leaves the rule nothing to check") {
			t.Errorf("%s %s=%s: err = %v, want it refused as vacuous", c.rule, c.param, c.value, err)
		}
		if _, err := verdict.Evaluate(verdict.Input{}, verdict.Spec{Rule: c.rule, Params: map[string]string{c.param: c.value}, Tolerance: "any reason"}); err == nil {
			t.Errorf("%s %s=%s: Evaluate judged it", c.rule, c.param, c.value)
		}
	}
}

// A value that loosens a rule against its default is a tolerance: the scenario must say why
// (TolerancesSet) and the verdict shows it with the reason (Result.Tolerances). A value that keeps
// or tightens the default is not.
func TestLooseningParamsAreTolerances(t *testing.T) {
	for _, c := range []struct {
		rule   string
		params map[string]string
		want   string
	}{
		{"readiness-withdrawn-in-window", map[string]string{"min-withdrawn": "2"}, "min-withdrawn"},
		{"readiness-withdrawn-in-window", map[string]string{"hold": "false"}, "hold"},
		{"readiness-withdrawn-in-window", map[string]string{"hold": "true"}, ""},
		{"recovery-within", map[string]string{"replicas": "1"}, "replicas"},
		{"terminating-before-exit", map[string]string{"min-lead": "500ms"}, "min-lead"},
		{"min-ready-endpoints", map[string]string{"min": "2"}, ""},
		{"ready-in-every-zone", map[string]string{"min": "2"}, ""},
		{"no-traffic-after-withdrawal", map[string]string{"require-withdrawal": "true"}, ""},
	} {
		if got := strings.Join(verdict.TolerancesSet(c.rule, c.params), ","); got != c.want {
			t.Errorf("%s %v: tolerances set %q, want %q", c.rule, c.params, got, c.want)
		}
		res, err := verdict.Evaluate(verdict.Input{}, verdict.Spec{Rule: c.rule, Params: c.params, Tolerance: "the reason"})
		if err != nil {
			t.Fatalf("%s %v: %v", c.rule, c.params, err)
		}
		shown := false
		for _, tol := range res.Tolerances {
			shown = shown || (c.want != "" && strings.HasPrefix(tol, c.want+"=") && strings.HasSuffix(tol, ": the reason"))
		}
		if shown != (c.want != "") {
			t.Errorf("%s %v: result tolerances %q, want %q shown with its reason: %v", c.rule, c.params, res.Tolerances, c.want, c.want != "")
		}
	}
}

// A propagation the target or scenario widened past its default is listed beside the verdicts of
// the rules whose bounds it widens, and not beside others.
func TestWidenedPropagationShownBesideVerdict(t *testing.T) {
	widened := oracle.Assumption{Name: oracle.AllowancePropagation, Declared: 60 * time.Second, Used: oracle.MaxPropagation,
		Default: oracle.DefaultPropagation, Cap: oracle.MaxPropagation, Explain: "assumption: propagation 1m0s (annotation) capped at 5s"}
	narrower := widened
	narrower.Used, narrower.Explain = time.Second, "assumption: propagation 1s: narrower"
	for _, c := range []struct {
		rule  string
		a     oracle.Assumption
		shown bool
	}{
		{"readiness-withdrawn-in-window", widened, true},
		{"no-traffic-after-withdrawal", widened, true},
		{"failed-requests-budget", widened, true},
		{"recovery-within", widened, true},
		{"readiness-withdrawn-in-window", narrower, false},
		{"no-liveness-restarts", widened, false},
		{"terminating-before-exit", widened, false}, // a longer propagation asks a longer lead
	} {
		in := verdict.Input{Oracle: oracle.Oracle{Propagation: c.a.Used, Assumptions: []oracle.Assumption{c.a}}}
		res, err := verdict.Evaluate(in, verdict.Spec{Rule: c.rule})
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(res.Tolerances, c.a.Explain); got != c.shown {
			t.Errorf("%s with %q: tolerances %q, want it shown: %v", c.rule, c.a.Explain, res.Tolerances, c.shown)
		}
	}
}
