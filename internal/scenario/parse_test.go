package scenario

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

var testVocab = Vocabulary{
	Faults:   []string{"db-latency", "pod-delete", "stall"},
	Rules:    []string{"no-liveness-restarts", "min-ready-endpoints", "failed-requests-budget"},
	Variants: []string{"good", "deep-liveness"},
}

const goodYAML = `name: db-slowness
description: the shared DB turns slow
seed: 7
parallel: false
settle: 3s
target:
  variant: deep-liveness
  replicas: 2
load:
  rate: 40
  duration: 45s
  keepAlive: false
labels: [readiness, dependency, readiness]
faults:
  - type: db-latency
    at: 5s
    duration: 30s
    params:
      latency: 2000ms
      toxicity: 1.0
expect:
  - no-liveness-restarts
  - rule: min-ready-endpoints
    params: {min: 2}
`

func TestParseGood(t *testing.T) {
	s, err := Parse("db-slowness.yaml", []byte(goodYAML), testVocab)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if s.Name != "db-slowness" || s.Seed != 7 || s.Parallel || s.Settle != 3*time.Second {
		t.Errorf("header = %q seed %d parallel %v settle %s", s.Name, s.Seed, s.Parallel, s.Settle)
	}
	if !s.HasLabel("readiness") || !s.HasLabel("dependency") || len(s.Labels) != 2 {
		t.Errorf("labels = %v, want readiness and dependency once each", s.Labels)
	}
	if s.Target.Variant != "deep-liveness" || s.Target.Replicas != 2 {
		t.Errorf("target = %+v", s.Target)
	}
	if s.Load.Rate != 40 || s.Load.Duration != 45*time.Second || s.Load.KeepAlive || s.Load.Path != DefaultPath {
		t.Errorf("load = %+v", s.Load)
	}
	if len(s.Faults) != 1 {
		t.Fatalf("faults = %+v", s.Faults)
	}
	f := s.Faults[0]
	if f.Type != "db-latency" || f.At != 5*time.Second || f.Duration != 30*time.Second || f.End() != 35*time.Second {
		t.Errorf("fault = %+v", f)
	}
	if f.Params["latency"] != "2000ms" || f.Params["toxicity"] != "1.0" || f.Line != 15 {
		t.Errorf("fault params = %v line %d", f.Params, f.Line)
	}
	if got := strings.Join(s.Rules(), ","); got != "no-liveness-restarts,min-ready-endpoints" {
		t.Errorf("rules = %s", got)
	}
	if s.Expect[1].Params["min"] != "2" {
		t.Errorf("expect params = %v", s.Expect[1].Params)
	}
	if s.Span() != 48*time.Second {
		t.Errorf("span = %s", s.Span())
	}
}

func TestParseDefaults(t *testing.T) {
	s, err := Parse("x.yaml", []byte("name: x\nload: {rate: 10, duration: 10s}\nexpect: [no-liveness-restarts]\n"), testVocab)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if s.Target.Variant != DefaultVariant || s.Target.Replicas != DefaultReplicas || s.Seed != DefaultSeed ||
		!s.Parallel || !s.Load.KeepAlive || s.Settle != DefaultSettle || s.Load.Timeout != DefaultTimeout {
		t.Errorf("defaults not applied: %+v", s)
	}
}

// Each bad file must give exactly this first problem (file:line: path: message prefix).
func TestParseBad(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown field", "name: x\nload: {rate: 10, duration: 10s}\nexpect: [no-liveness-restarts]\nretries: 3\n",
			"bad.yaml:4: retries: unknown field (known: description, expect, faults, labels, load, name, oracle, parallel, seed, settle, target)"},
		{"unknown nested field", "name: x\nload:\n  rate: 10\n  duration: 10s\n  rps: 3\nexpect: [no-liveness-restarts]\n",
			"bad.yaml:5: load.rps: unknown field"},
		{"wrong type int", "name: x\nload:\n  rate: fast\n  duration: 10s\nexpect: [no-liveness-restarts]\n",
			`bad.yaml:3: load.rate: expected an integer, got string "fast"`},
		{"wrong type duration", "name: x\nload:\n  rate: 10\n  duration: 30\nexpect: [no-liveness-restarts]\n",
			`bad.yaml:4: load.duration: expected a Go duration such as "30s", got integer 30`},
		{"bad duration text", "name: x\nload:\n  rate: 10\n  duration: 30 seconds\nexpect: [no-liveness-restarts]\n",
			`bad.yaml:4: load.duration: expected a Go duration such as "30s", got "30 seconds"`},
		{"wrong type bool", "name: x\nparallel: maybe\nload: {rate: 10, duration: 10s}\nexpect: [no-liveness-restarts]\n",
			`bad.yaml:2: parallel: expected true or false, got string "maybe"`},
		{"missing required", "name: x\nexpect: [no-liveness-restarts]\n",
			"bad.yaml:1: load: missing required field"},
		{"missing nested required", "name: x\nload:\n  rate: 10\nexpect: [no-liveness-restarts]\n",
			"bad.yaml:3: load.duration: missing required field"},
		{"missing fault type", "name: x\nload: {rate: 10, duration: 10s}\nfaults:\n  - at: 1s\nexpect: [no-liveness-restarts]\n",
			"bad.yaml:4: faults[0].type: missing required field"},
		{"unknown until", "name: x\nload: {rate: 10, duration: 10s}\nfaults:\n  - type: pod-delete\n    at: 1s\n    until: readiness-gone\nexpect: [no-liveness-restarts]\n",
			`bad.yaml:6: faults[0].until: unknown moment "readiness-gone" (known: readiness-withdrawn)`},
		{"until and atLeast", "name: x\nload: {rate: 10, duration: 10s}\nfaults:\n  - type: db-latency\n    at: 1s\n    duration: 2s\n    until: readiness-withdrawn\n    atLeast: readiness-withdrawn\nexpect: [no-liveness-restarts]\n",
			`bad.yaml:4: faults[0].atLeast: until and atLeast both size the fault: give one`},
		{"atLeast on a one-shot", "name: x\nload: {rate: 10, duration: 10s}\nfaults:\n  - type: pod-delete\n    at: 1s\n    atLeast: readiness-withdrawn\nexpect: [no-liveness-restarts]\n",
			`bad.yaml:4: faults[0].atLeast: atLeast stretches a fault's duration: give the fault one (its minimum)`},
		{"unknown fault type", "name: x\nload: {rate: 10, duration: 10s}\nfaults:\n  - type: db-slow\n    at: 1s\nexpect: [no-liveness-restarts]\n",
			`bad.yaml:4: faults[0].type: unknown fault type "db-slow" (known: db-latency, pod-delete, stall)`},
		{"unknown rule bare", "name: x\nload: {rate: 10, duration: 10s}\nexpect:\n  - no-liveness-restarts\n  - zero-errors\n",
			`bad.yaml:5: expect[1]: unknown verdict rule "zero-errors"`},
		{"unknown rule mapping", "name: x\nload: {rate: 10, duration: 10s}\nexpect:\n  - rule: zero-errors\n",
			`bad.yaml:4: expect[0].rule: unknown verdict rule "zero-errors"`},
		{"unknown variant", "name: x\ntarget:\n  variant: flaky\nload: {rate: 10, duration: 10s}\nexpect: [no-liveness-restarts]\n",
			`bad.yaml:3: target.variant: unknown variant "flaky" (known: deep-liveness, good)`},
		{"param not scalar", "name: x\nload: {rate: 10, duration: 10s}\nfaults:\n  - type: stall\n    at: 1s\n    params:\n      pod: [a, b]\nexpect: [no-liveness-restarts]\n",
			"bad.yaml:7: faults[0].params.pod: expected a scalar value, got a list"},
		{"fault after load", "name: x\nload: {rate: 10, duration: 10s}\nfaults:\n  - type: stall\n    at: 5s\n    duration: 10s\nexpect: [no-liveness-restarts]\n",
			"bad.yaml:4: faults[0].duration: ends at 15s, after the load ends at 10s"},
		{"bad label", "name: x\nlabels: [Rollout]\nload: {rate: 10, duration: 10s}\nexpect: [no-liveness-restarts]\n",
			`bad.yaml:2: labels[0]: a label is lowercase letters, digits and '-', at most 40 characters, got "Rollout"`},
		{"rate out of range", "name: x\nload: {rate: 0, duration: 10s}\nexpect: [no-liveness-restarts]\n",
			"bad.yaml:2: load.rate: must be between 1 and 2000, got 0"},
		{"replicas out of range", "name: x\ntarget: {replicas: 0}\nload: {rate: 1, duration: 10s}\nexpect: [no-liveness-restarts]\n",
			"bad.yaml:2: target.replicas: must be between 1 and 10, got 0"},
		{"bad name", "name: DB_Slow\nload: {rate: 10, duration: 10s}\nexpect: [no-liveness-restarts]\n",
			"bad.yaml:1: name: must be lowercase letters"},
		{"empty expect", "name: x\nload: {rate: 10, duration: 10s}\nexpect: []\n",
			"bad.yaml:3: expect: must name at least one verdict rule"},
		{"duplicate field", "name: x\nname: y\nload: {rate: 10, duration: 10s}\nexpect: [no-liveness-restarts]\n",
			"bad.yaml:2: name: duplicate field"},
		{"malformed", "name: x\nload:\n  rate: 1\n   duration: 2s\nexpect: [a]\n",
			"bad.yaml:4: malformed YAML: mapping values are not allowed in this context"},
		{"tab", "name: x\n\tload: 2\n", "bad.yaml:2: malformed YAML: found a tab character"},
		{"not a mapping", "- a\n- b\n", "bad.yaml:1: expected a mapping, got a list"},
		{"empty", "", "bad.yaml: empty file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tc.yaml), testVocab)
			if err == nil {
				t.Fatalf("Parse accepted a bad file")
			}
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("error is %T, want *InvalidError: %v", err, err)
			}
			if got := ie.Problems[0].Error(); !strings.HasPrefix(got, tc.want) {
				t.Errorf("first problem\n got: %s\nwant: %s…", got, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err.Error())
			}
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	_, err := Parse("bad.yaml", []byte("name: x\nload:\n  rate: fast\n  duration: 30\nbogus: 1\nexpect: [nope]\n"), testVocab)
	var ie *InvalidError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v", err)
	}
	if len(ie.Problems) != 4 {
		t.Fatalf("want 4 problems, got %d:\n%s", len(ie.Problems), ie.Lines())
	}
	if !strings.Contains(err.Error(), "(and 3 more problems)") {
		t.Errorf("summary line = %q", err.Error())
	}
}

func TestCatalogueNameMustMatchFile(t *testing.T) {
	fsys := fstest.MapFS{
		"s/a.yaml": {Data: []byte("name: a\nload: {rate: 1, duration: 1s}\nexpect: [no-liveness-restarts]\n")},
		"s/b.yaml": {Data: []byte("name: c\nload: {rate: 1, duration: 1s}\nexpect: [no-liveness-restarts]\n")},
	}
	_, err := LoadCatalogue(fsys, "s", "scenarios", testVocab)
	if err == nil || !strings.HasPrefix(err.Error(), `scenarios/b.yaml:1: name: is "c" but the file is b.yaml`) {
		t.Fatalf("err = %v", err)
	}
}

func TestCatalogueSelect(t *testing.T) {
	fsys := fstest.MapFS{
		"s/a.yaml":        {Data: []byte("name: a\nload: {rate: 1, duration: 1s}\nexpect: [no-liveness-restarts]\n")},
		"s/b.yaml":        {Data: []byte("name: b\nload: {rate: 1, duration: 1s}\nexpect: [no-liveness-restarts]\n")},
		"s/" + MatrixFile: {Data: []byte("mutations: []\n")},
	}
	c, err := LoadCatalogue(fsys, "s", "scenarios", testVocab)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Names(), ","); got != "a,b" {
		t.Fatalf("names = %s", got)
	}
	sel, err := c.Select([]string{"b", "b"}, testVocab)
	if err != nil || len(sel) != 1 || sel[0].Name != "b" {
		t.Fatalf("select = %v, %v", sel, err)
	}
	if _, err := c.Select([]string{"zzz"}, testVocab); err == nil || err.Error() != `unknown scenario "zzz" (known: a, b)` {
		t.Fatalf("unknown select err = %v", err)
	}
}

func TestMatrix(t *testing.T) {
	c := &Catalogue{Scenarios: []*Scenario{{Name: "db-slowness", Expect: []Expectation{{Rule: "no-liveness-restarts"}}}}}
	good := "mutations:\n  - variant: deep-liveness\n    scenario: db-slowness\n    rule: no-liveness-restarts\n    why: restart storm\n    evidence: 'by liveness'\n    pod: faulted\n"
	m, err := ParseMatrix("m.yaml", []byte(good), c, testVocab)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Mutations) != 1 || m.Mutations[0].Why != "restart storm" || m.Variants()[0] != "deep-liveness" ||
		!m.Mutations[0].EvidenceRE().MatchString("x restarted by liveness") || m.Mutations[0].Pod != "faulted" {
		t.Fatalf("matrix = %+v", m)
	}
	for in, want := range map[string]string{
		"rule: no-liveness-restarts\n":                                 `m.yaml:2: mutations[0].evidence: missing required field`,
		"rule: no-liveness-restarts\n    evidence: '(x'\n":             `m.yaml:5: mutations[0].evidence: not a regular expression`,
		"rule: no-liveness-restarts\n    evidence: x\n    pod: some\n": `m.yaml:6: mutations[0].pod: want "faulted"`,
	} {
		_, err := ParseMatrix("m.yaml", []byte("mutations:\n  - variant: deep-liveness\n    scenario: db-slowness\n    "+in), c, testVocab)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: err = %v, want prefix %q", in, err, want)
		}
	}
	bad := "mutations:\n  - variant: deep-liveness\n    scenario: db-slowness\n    rule: min-ready-endpoints\n    evidence: x\n"
	_, err = ParseMatrix("m.yaml", []byte(bad), c, testVocab)
	if err == nil || !strings.HasPrefix(err.Error(), `m.yaml:4: mutations[0].rule: scenario db-slowness does not expect rule "min-ready-endpoints"`) {
		t.Fatalf("err = %v", err)
	}
	unknown := "mutations:\n  - variant: deep-liveness\n    scenario: nope\n    rule: no-liveness-restarts\n    evidence: x\n"
	_, err = ParseMatrix("m.yaml", []byte(unknown), c, testVocab)
	if err == nil || !strings.HasPrefix(err.Error(), `m.yaml:3: mutations[0].scenario: unknown scenario "nope"`) {
		t.Fatalf("err = %v", err)
	}
}

// An also rule carries its own evidence pattern; a bare rule name, a missing or broken pattern, an
// unknown rule and a rule the scenario does not expect are each refused where they stand.
func TestMatrixAlsoEvidence(t *testing.T) {
	c := &Catalogue{Scenarios: []*Scenario{{Name: "db-slowness", Expect: []Expectation{{Rule: "no-liveness-restarts"}, {Rule: "failed-requests-budget"}}}}}
	head := "mutations:\n  - variant: deep-liveness\n    scenario: db-slowness\n    rule: no-liveness-restarts\n    evidence: x\n    also:\n"
	m, err := ParseMatrix("m.yaml", []byte(head+"      - {rule: failed-requests-budget, evidence: 'during-termination [1-9]'}\n"), c, testVocab)
	if err != nil {
		t.Fatal(err)
	}
	mu := m.Mutations[0]
	if len(mu.Also) != 1 || mu.Also[0].Rule != "failed-requests-budget" || !mu.Also[0].EvidenceRE().MatchString("during-termination 3") ||
		mu.Also[0].EvidenceRE().MatchString("during-termination 0") {
		t.Fatalf("also = %+v", mu.Also)
	}
	if got := strings.Join(mu.Rules(), ","); got != "no-liveness-restarts,failed-requests-budget" {
		t.Errorf("rules = %s", got)
	}
	for in, want := range map[string]string{
		"      - failed-requests-budget\n":                              `m.yaml:7: mutations[0].also[0]: want {rule, evidence}`,
		"      - {rule: failed-requests-budget}\n":                      `m.yaml:7: mutations[0].also[0].evidence: missing required field`,
		"      - {evidence: x}\n":                                       `m.yaml:7: mutations[0].also[0].rule: missing required field`,
		"      - {rule: failed-requests-budget, evidence: '(x'}\n":      `m.yaml:7: mutations[0].also[0].evidence: not a regular expression`,
		"      - {rule: failed-requests-budget, evidence: x, pod: p}\n": `m.yaml:7: mutations[0].also[0].pod: unknown field`,
		"      - {rule: min-ready-endpoints, evidence: x}\n":            `m.yaml:7: mutations[0].also[0].rule: scenario db-slowness does not expect rule "min-ready-endpoints"`,
		"      - {rule: no-such-rule, evidence: x}\n":                   `m.yaml:7: mutations[0].also[0].rule: unknown verdict rule "no-such-rule"`,
	} {
		_, err := ParseMatrix("m.yaml", []byte(head+in), c, testVocab)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: err = %v, want prefix %q", in, err, want)
		}
	}
}

func TestParseParamChecks(t *testing.T) {
	vocab := testVocab
	vocab.RuleParams = func(rule string, params map[string]string) error {
		if _, ok := params["mni"]; ok {
			return errors.New(`rule min-ready-endpoints has no parameter "mni" (it takes: min, grace)`)
		}
		return nil
	}
	vocab.FaultParams = func(typ string, params map[string]string) error {
		if params["latency"] == "slow" {
			return errors.New(`latency: want a duration, got "slow"`)
		}
		return nil
	}
	_, err := Parse("bad.yaml", []byte("name: x\nload: {rate: 10, duration: 10s}\nexpect:\n  - rule: min-ready-endpoints\n    params:\n      mni: 2\n"), vocab)
	if err == nil || !strings.HasPrefix(err.Error(), `bad.yaml:6: expect[0].params: rule min-ready-endpoints has no parameter "mni"`) {
		t.Fatalf("rule params err = %v", err)
	}
	_, err = Parse("bad.yaml", []byte("name: x\nload: {rate: 10, duration: 10s}\nfaults:\n  - type: db-latency\n    at: 1s\n    params: {latency: slow}\nexpect: [no-liveness-restarts]\n"), vocab)
	if err == nil || !strings.HasPrefix(err.Error(), `bad.yaml:6: faults[0].params: latency: want a duration, got "slow"`) {
		t.Fatalf("fault params err = %v", err)
	}
}

// Default rules join every scenario's expect list, once, after the listed ones.
func TestParseAppendsDefaultRules(t *testing.T) {
	v := testVocab
	v.Defaults = []string{"failed-requests-budget", "no-liveness-restarts"}
	s, err := Parse("x.yaml", []byte("name: x\nload: {rate: 10, duration: 10s}\nexpect: [no-liveness-restarts]\n"), v)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := strings.Join(s.Rules(), ","); got != "no-liveness-restarts,failed-requests-budget" {
		t.Errorf("rules = %s, want the listed one then the missing default", got)
	}
}

// A hand-set allowance needs its reason in the file, which the report then shows.
func TestParseRequiresAReasonForATolerance(t *testing.T) {
	v := testVocab
	v.Tolerances = func(rule string, params map[string]string) []string {
		if rule == "min-ready-endpoints" && params["grace"] != "" && params["grace"] != "0s" {
			return []string{"grace"}
		}
		return nil
	}
	head := "name: x\nload: {rate: 10, duration: 10s}\nexpect:\n  - rule: min-ready-endpoints\n"
	_, err := Parse("x.yaml", []byte(head+"    params: {min: 2, grace: 2s}\n"), v)
	if err == nil || !strings.Contains(err.Error(), `x.yaml:5: expect[0].params: grace loosens the bound of min-ready-endpoints by hand: say why`) {
		t.Fatalf("no reason: err = %v", err)
	}
	s, err := Parse("x.yaml", []byte(head+"    params: {min: 2, grace: 2s}\n    tolerance: a survivor can blip on a loaded node\n"), v)
	if err != nil {
		t.Fatalf("with a reason: %v", err)
	}
	if s.Expect[0].Tolerance != "a survivor can blip on a loaded node" {
		t.Errorf("tolerance = %q", s.Expect[0].Tolerance)
	}
	if _, err := Parse("x.yaml", []byte(head+"    params: {min: 2, grace: 0s}\n"), v); err != nil {
		t.Errorf("a zero tolerance loosens nothing and needs no reason: %v", err)
	}
}
