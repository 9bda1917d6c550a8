package lint

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/probegate/probegate/fixtures/manifests"
)

// variantExpectation is what lint must say about one fixture variant's manifest.
type variantExpectation struct {
	// rules are the findings that name the variant's anti-pattern.
	rules []string
	// also are findings the variant's probe settings cause besides its anti-pattern.
	also []string
	// declaredBy names the annotation without which the anti-pattern is invisible in the manifest
	// (the variant differs from good only in the VARIANT env the binary reads). When the manifest
	// does not declare it, the test checks the variant lints exactly like good, and says so.
	declaredBy string
	// invisible says why the anti-pattern lives only in the binary: lint must treat the variant
	// exactly like good; only a scenario run can tell them apart.
	invisible string
}

var variantExpectations = map[string]variantExpectation{
	"good":             {},
	"identical-probes": {rules: []string{"PG001"}, also: []string{"PG002", "PG007", "PG005", "PG006"}},
	// PG003 (the guessed initial delay) is restated by PG004 once the measured cold start outlasts it.
	"no-startup-probe": {rules: []string{"PG004"}},
	// PG006 (the 1 s timeout on the same liveness probe) restates PG005 and is dropped.
	"deep-liveness": {rules: []string{"PG005"},
		declaredBy: AnnotationDependencyCheckPaths + " listing /health/live (in this variant it pings the database)"},
	"no-drain": {rules: []string{"PG009"},
		declaredBy: AnnotationWithdrawal + " (or a preStop sleep) on good.yaml and the other variants, for the target's in-app WITHDRAWAL_DELAY"},
	"always-ready": {invisible: "/health/ready answers 200 unconditionally inside the binary; its manifest " +
		"is good.yaml's with VARIANT=always-ready. Confirm with: probegate run --scenario db-outage --variant always-ready"},
	"shared-pool-probe": {invisible: "the health handlers queue behind the worker pool inside the binary; its " +
		"manifest is good.yaml's with VARIANT=shared-pool-probe. Confirm with: probegate run --scenario overload --variant shared-pool-probe"},
	"shallow-liveness": {invisible: "/health/live answers 200 off the worker loop inside the binary; its manifest " +
		"is good.yaml's with VARIANT=shallow-liveness. Confirm with: probegate run --scenario event-loop-stall --variant shallow-liveness"},
	"keepalive-drain": {invisible: "the binary keeps kept-alive connections open while withdrawn; its manifest " +
		"is good.yaml's with VARIANT=keepalive-drain. Confirm with: probegate run --scenario eviction-under-load --variant keepalive-drain"},
	"slow-recovery": {invisible: "the hysteresis lives in the READY_RECOVER_AFTER env the binary reads (the manifest " +
		"still declares good's recovery lag). Confirm with: probegate run --scenario db-outage --variant slow-recovery"},
	"no-hysteresis": {invisible: "the flap damping lives in the READY_FLAP_HOLD env the binary reads (0 here); no lint rule " +
		"reads app hysteresis. Confirm with: probegate run --scenario flapping-dependency --variant no-hysteresis"},
	"short-grace": {rules: []string{"PG008"}},
	"no-pdb": {invisible: "no lint rule reads PodDisruptionBudgets (a missing budget is a drain's problem, not a probe's); " +
		"its manifest is good.yaml's without the budget. Confirm with: probegate run --scenario node-drain --variant no-pdb (on two or more nodes)"},
	"co-located": {invisible: "no lint rule reads placement; its manifest is good.yaml's with every replica required on one node. " +
		"Confirm with: probegate run --scenario node-loss --variant co-located (on two or more nodes)"},
	"publish-not-ready": {rules: []string{"PG013"}},
	"wrapper": {invisible: "not an anti-pattern: the good app serves from a child of the container's main process " +
		"(SUPERVISE=true), which no manifest field shows; a control for the freeze fault, which must stop the child too. " +
		"Confirm with: probegate run --scenario process-freeze --variant wrapper (it must PASS as good does)"},
	"queue-only": {invisible: "the binary admits every request however long its queue; its manifest is " +
		"good.yaml's with VARIANT=queue-only. Confirm with: probegate run --scenario overload --variant queue-only"},
}

// scenarioColdStart reads the bootstrap time the cold-start scenario injects, the measured cold
// start the no-startup-probe variant must fail.
func scenarioColdStart(t *testing.T) time.Duration {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "cold-start.yaml"))
	if err != nil {
		t.Fatalf("read the cold-start scenario: %v", err)
	}
	var sc struct {
		Faults []struct {
			Type   string            `json:"type"`
			Params map[string]string `json:"params"`
		} `json:"faults"`
	}
	if err := sigsyaml.Unmarshal(data, &sc); err != nil {
		t.Fatalf("decode the cold-start scenario: %v", err)
	}
	for _, f := range sc.Faults {
		if f.Type == "cold-start" {
			d, err := time.ParseDuration(f.Params["bootstrap"])
			if err != nil {
				t.Fatalf("cold-start bootstrap %q: %v", f.Params["bootstrap"], err)
			}
			return d
		}
	}
	t.Fatal("the cold-start scenario injects no cold-start fault")
	return 0
}

// variantSource returns a fixture variant's manifest text.
type variantSource func(name string) ([]byte, error)

func lintVariant(t *testing.T, read variantSource, name string, cfg Config) (*Inventory, []Finding) {
	t.Helper()
	raw, err := read(name)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := Parse(filepath.Join("fixtures", "manifests", name+".yaml"), raw)
	if err != nil {
		t.Fatalf("lint cannot read fixture %s: %v", name, err)
	}
	return inv, Lint(inv, cfg)
}

func ruleSet(fs []Finding) map[string]bool {
	set := map[string]bool{}
	for _, f := range fs {
		set[f.RuleID] = true
	}
	return set
}

func keys(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// withdrawalDeclared reports whether inv's workloads declare a withdrawal delay: the annotation
// with a positive value, or a preStop hook.
func withdrawalDeclared(inv *Inventory) bool {
	for _, w := range inv.Workloads {
		if d, ok, err := declared(w, AnnotationWithdrawal); ok && err == nil && d > 0 {
			return true
		}
		for _, c := range w.Containers() {
			if _, has, _ := preStopDelay(c); has {
				return true
			}
		}
	}
	return false
}

// livenessDeclaredDeep reports whether inv declares /health/live a dependency check.
func livenessDeclaredDeep(inv *Inventory) bool {
	for _, w := range inv.Workloads {
		if dependencyCheck(w, "/health/live") == declaredDependency {
			return true
		}
	}
	return false
}

// checkVariants lints every fixture variant read by read, with the cold start the cold-start
// scenario injects, and holds each to its expectation. It returns the gaps: anti-patterns that
// stayed invisible because the manifests lack a declaration.
func checkVariants(t *testing.T, read variantSource) (gaps []string) {
	cfg := Config{ColdStart: scenarioColdStart(t), ColdStartSource: "scenarios/cold-start.yaml"}
	goodInv, good := lintVariant(t, read, "good", cfg)

	// Without a declared withdrawal delay on good.yaml, good and no-drain are the same manifest to
	// lint: PG009 fires on both.
	goodAllowed := map[string]bool{}
	if !withdrawalDeclared(goodInv) {
		goodAllowed["PG009"] = true
		gaps = append(gaps, "no-drain: "+variantExpectations["no-drain"].declaredBy)
	}
	for _, f := range good {
		if !goodAllowed[f.RuleID] {
			t.Errorf("good.yaml: unexpected finding %s at %v: %s", f.RuleID, f.Pos, f.Message)
		}
	}
	goodRules := ruleSet(good)

	for _, name := range manifests.Variants() {
		exp, ok := variantExpectations[name]
		if !ok {
			t.Errorf("fixture variant %q has no expectation here: add what lint must find in it", name)
			continue
		}
		if name == "good" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			inv, fs := lintVariant(t, read, name, cfg)
			got := ruleSet(fs)
			hidden := exp.invisible
			switch {
			case name == "no-drain" && goodAllowed["PG009"]:
				hidden = "invisible until declared: " + exp.declaredBy
			case name == "deep-liveness" && !livenessDeclaredDeep(inv):
				hidden = "invisible until declared: " + exp.declaredBy
				gaps = append(gaps, name+": "+exp.declaredBy)
			}
			if hidden != "" {
				t.Logf("%s", hidden)
				if keys(got) != keys(goodRules) {
					t.Errorf("lints as %q, good as %q: the manifests should differ only in VARIANT", keys(got), keys(goodRules))
				}
				return
			}
			allowed := map[string]bool{}
			for _, id := range append(append([]string{}, exp.rules...), exp.also...) {
				allowed[id] = true
			}
			for id := range goodRules {
				allowed[id] = true
			}
			for _, id := range exp.rules {
				if !got[id] {
					t.Errorf("no %s finding (its anti-pattern); got %q", id, keys(got))
				}
			}
			for _, f := range fs {
				if !allowed[f.RuleID] {
					t.Errorf("unexpected finding %s at %v: %s", f.RuleID, f.Pos, f.Message)
				}
				if f.RuleID == exp.rules[0] && !strings.Contains(f.Confirm, "--variant "+name) {
					t.Errorf("confirm line %q does not name the variant", f.Confirm)
				}
			}
		})
	}
	return gaps
}

// TestFixtureVariants holds the fixture manifests as they are to their expectations: each variant
// whose anti-pattern shows in its manifest produces that finding, the good manifest produces none,
// and variants whose anti-pattern lives only in the binary lint exactly like good (logged; only a
// scenario run tells them apart). The manifests declare their withdrawal delay, drain time and
// dependency-check paths, so no anti-pattern may stay invisible for want of a declaration.
func TestFixtureVariants(t *testing.T) {
	if gaps := checkVariants(t, manifests.Read); len(gaps) != 0 {
		t.Errorf("fixture manifests lack declarations lint needs: %v", gaps)
	}
}

// TestFixtureVariantsWithoutDeclarations strips nothing from good but removes the withdrawal
// declaration from a copy: lint must then report the missing withdrawal delay (PG009) on it, which
// is what makes no-drain (undeclared) distinguishable from good.
func TestFixtureVariantsWithoutDeclarations(t *testing.T) {
	raw, err := manifests.Read("good")
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(string(raw), "\n") {
		if !strings.Contains(l, AnnotationWithdrawal) {
			kept = append(kept, l)
		}
	}
	inv, err := Parse("good-undeclared.yaml", []byte(strings.Join(kept, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	rep := NewReport(inv, Config{}, Warning)
	if !ruleSet(rep.Findings)["PG009"] {
		t.Errorf("good.yaml without %s: no PG009 finding (got %v)", AnnotationWithdrawal, ruleSet(rep.Findings))
	}
}

// injectTemplateAnnotations adds lines (already indented for the pod template's annotations) to the
// first pod template annotations block of a manifest, creating the block if needed.
func injectTemplateAnnotations(t *testing.T, raw []byte, lines string) []byte {
	t.Helper()
	s := string(raw)
	if i := strings.Index(s, "\n      annotations:\n"); i >= 0 {
		at := i + len("\n      annotations:\n")
		return []byte(s[:at] + lines + s[at:])
	}
	marker := "\n  template:\n    metadata:\n"
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatal("fixture manifest has no pod template metadata to annotate")
	}
	at := i + len(marker)
	return []byte(s[:at] + "      annotations:\n" + lines + s[at:])
}
