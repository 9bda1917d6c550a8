package scenarios

import (
	"strings"
	"testing"

	"github.com/probegate/probegate/fixtures/target/config"
	"github.com/probegate/probegate/internal/scenario"
)

// The catalogue must load against the real registries: every rule, parameter and variant exists.
func TestCatalogueLoads(t *testing.T) {
	c, m, err := Load(Vocabulary())
	if err != nil {
		t.Fatalf("catalogue: %v", err)
	}
	want := []string{"cold-start", "db-outage", "db-slowness", "drain-exceeds-grace", "event-loop-stall",
		"eviction-under-load", "flapping-dependency", "long-request-drain", "node-drain", "node-loss", "overload", "pod-delete-under-load",
		"process-freeze", "rolling-update-under-load", "short-freeze", "zone-spread"}
	if got := strings.Join(c.Names(), ","); got != strings.Join(want, ",") {
		t.Fatalf("scenarios = %s", got)
	}
	for _, s := range c.Scenarios {
		if s.Target.Variant != "good" {
			t.Errorf("%s: catalogue scenarios run the good target, got %s", s.Name, s.Target.Variant)
		}
		if s.Span() < 30e9 || s.Span() > 90e9 {
			t.Errorf("%s: fault + oracle time %s outside 30–90 s", s.Name, s.Span())
		}
	}
	// Every anti-pattern variant appears in the matrix.
	variants := map[string]bool{}
	for _, v := range m.Variants() {
		variants[v] = true
	}
	// Harness controls are not anti-patterns: they must PASS where good does.
	controls := map[string]string{
		"wrapper": "a control of the freeze fault (its app is a child of the container's main process): process-freeze must PASS as on good",
	}
	for _, v := range config.Names() {
		if v != "good" && controls[v] == "" && !variants[v] {
			t.Errorf("variant %s has no row in the mutation matrix", v)
		}
	}
	// Every rule any scenario expects (no-unexpected-restarts is every scenario's default) is the
	// designated or an "also" rule of some row: a rule no control has made FAIL is unproven.
	designated := map[string]bool{}
	for _, mu := range m.Mutations {
		for _, r := range mu.Rules() {
			designated[r] = true
		}
	}
	for _, s := range c.Scenarios {
		for _, r := range s.Rules() {
			if !designated[r] {
				t.Errorf("%s expects %s, which no row of the mutation matrix makes FAIL", s.Name, r)
				designated[r] = true // once
			}
		}
	}
}

// Scenario files are checked against the fault registry's parameters.
func TestVocabularyChecksFaultParams(t *testing.T) {
	check := Vocabulary().FaultParams
	if err := check("db-latency", map[string]string{"latency": "2000ms"}); err != nil {
		t.Errorf("good params: %v", err)
	}
	for typ, params := range map[string]map[string]string{
		"db-latency": {"latency": "2 seconds"},
		"db-down":    {"x": "1"},
		"overload":   {},
		"nope":       nil,
	} {
		if err := check(typ, params); err == nil {
			t.Errorf("CheckParams(%s, %v) accepted bad parameters", typ, params)
		}
	}
}

// A scenario line that loosens a rule needs a reason, and one that leaves it nothing to check is
// refused at its line, through the real registries.
func TestVocabularyChecksLooseningParams(t *testing.T) {
	head := "name: x\nload: {rate: 10, duration: 30s}\nexpect:\n  - rule: readiness-withdrawn-in-window\n"
	for _, c := range []struct{ params, want string }{
		{"    params: {min-withdrawn: 2}\n", "x.yaml:5: expect[0].params: min-withdrawn loosens the bound of readiness-withdrawn-in-window by hand: say why"},
		{"    params: {hold: false}\n", "x.yaml:5: expect[0].params: hold loosens the bound"},
		{"    params: {min-withdrawn: 0}\n    tolerance: nothing to see\n", "x.yaml:5: expect[0].params: rule readiness-withdrawn-in-window parameter min-withdrawn=0 leaves the rule nothing to check"},
		{"    params: {min-withdrawn: 2}\n    tolerance: the keeper stays ready\n", ""},
		{"    params: {hold: true}\n", ""},
	} {
		_, err := scenario.Parse("x.yaml", []byte(head+c.params), Vocabulary())
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.params, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: err = %v, want %q", c.params, err, c.want)
		}
	}
}

// A scenario's oracle option that widens the propagation past its default needs a reason.
func TestVocabularyChecksOracleLoosening(t *testing.T) {
	tail := "load: {rate: 10, duration: 30s}\nexpect:\n  - no-liveness-restarts\n"
	_, err := scenario.Parse("x.yaml", []byte("name: x\noracle: {propagation: 60}\n"+tail), Vocabulary())
	if err == nil || !strings.Contains(err.Error(), "x.yaml:2: oracle: oracle option propagation widens its allowance past the default by hand: say why") {
		t.Errorf("propagation 60 without a reason: err = %v", err)
	}
	if _, err := scenario.Parse("x.yaml", []byte("name: x\noracle: {propagation: 3, tolerance: a slow kube-proxy}\n"+tail), Vocabulary()); err != nil {
		t.Errorf("with a reason: %v", err)
	}
}
