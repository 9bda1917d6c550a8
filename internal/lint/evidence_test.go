package lint

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/probegate/probegate/fixtures/manifests"
)

// matrixFile is the mutation matrix `make test` runs on the kind cluster.
var matrixFile = filepath.Join("..", "..", "scenarios", "mutations.yaml")

// readMatrix reads the mutation matrix's rows: variant, scenario and the verdicts they must FAIL.
func readMatrix(t *testing.T) []MatrixRow {
	t.Helper()
	data, err := os.ReadFile(matrixFile)
	if err != nil {
		t.Fatalf("read the mutation matrix: %v", err)
	}
	var doc struct {
		Mutations []struct {
			Variant  string `json:"variant"`
			Scenario string `json:"scenario"`
			Rule     string `json:"rule"`
			Also     []struct {
				Rule string `json:"rule"`
			} `json:"also"`
		} `json:"mutations"`
	}
	if err := sigsyaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("decode the mutation matrix %s: %v", matrixFile, err)
	}
	var rows []MatrixRow
	for _, m := range doc.Mutations {
		row := MatrixRow{Variant: m.Variant, Scenario: m.Scenario, Verdicts: []string{m.Rule}}
		for _, a := range m.Also {
			row.Verdicts = append(row.Verdicts, a.Rule)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		t.Fatalf("the mutation matrix %s has no rows", matrixFile)
	}
	return rows
}

// matrixEvidence derives, from the matrix and the fixture manifests, which rules the matrix shows.
func matrixEvidence(t *testing.T) []MatrixEvidence {
	t.Helper()
	ev, err := ShownByMatrix(readMatrix(t), manifests.Read)
	if err != nil {
		t.Fatalf("derive the matrix evidence: %v", err)
	}
	return ev
}

// TestMatrixEvidenceSane guards the derivation against a reader that silently finds nothing: the
// rules whose variants the matrix has long failed must come out confirmed by it.
func TestMatrixEvidenceSane(t *testing.T) {
	ev := matrixEvidence(t)
	for _, c := range []struct{ rule, variant string }{
		{"PG005", "deep-liveness"}, {"PG001", "identical-probes"}, {"PG009", "no-drain"}, {"PG003", "no-startup-probe"},
	} {
		if !slices.ContainsFunc(ev, func(e MatrixEvidence) bool { return e.Rule == c.rule && e.Variant == c.variant }) {
			t.Errorf("%s is not confirmed by the matrix on %s; derived: %+v", c.rule, c.variant, ev)
		}
	}
}

// TestMatrixEvidenceHeld checks every claim of matrix evidence against the matrix and lint, each
// independently of ShownByMatrix: a row for the variant runs the rule's scenario and must FAIL each
// claimed verdict, the rule predicts them, and lint finds the rule on the variant's manifest.
func TestMatrixEvidenceHeld(t *testing.T) {
	rows := readMatrix(t)
	for _, e := range matrixEvidence(t) {
		r, ok := RuleByID(e.Rule)
		if !ok {
			t.Errorf("matrix evidence names no rule: %+v", e)
			continue
		}
		if e.Scenario != r.Scenario {
			t.Errorf("%s: matrix evidence from %s, but the rule's scenario is %s", e.Rule, e.Scenario, r.Scenario)
		}
		held := slices.ContainsFunc(rows, func(row MatrixRow) bool {
			return row.Variant == e.Variant && row.Scenario == e.Scenario &&
				!slices.ContainsFunc(e.Verdicts, func(v string) bool { return !slices.Contains(row.Verdicts, v) })
		})
		if !held {
			t.Errorf("%s: no matrix row makes %s FAIL %v on %s", e.Rule, e.Scenario, e.Verdicts, e.Variant)
		}
		for _, v := range e.Verdicts {
			if !slices.Contains(r.Predicts, v) {
				t.Errorf("%s: matrix evidence %s is not a verdict the rule predicts (%v)", e.Rule, v, r.Predicts)
			}
		}
		_, fs := lintVariant(t, manifests.Read, e.Variant, Config{})
		if !ruleSet(fs)[e.Rule] {
			t.Errorf("%s: claimed on %s, but lint finds %s there", e.Rule, e.Variant, keys(ruleSet(fs)))
		}
	}
}

// TestAppEvidence checks each recorded app run: an existing rule, a known outcome, the rule's own
// scenario, and the fields the docs print.
func TestAppEvidence(t *testing.T) {
	for i, e := range AppEvidence {
		r, ok := RuleByID(e.Rule)
		if !ok || r.ID != e.Rule {
			t.Errorf("AppEvidence[%d]: %q is not a rule ID", i, e.Rule)
			continue
		}
		if !slices.Contains([]string{Confirmed, Refuted, Unconfirmed}, e.Outcome) {
			t.Errorf("AppEvidence[%d] (%s on %s): outcome %q, want %s, %s or %s", i, e.Rule, e.App, e.Outcome, Confirmed, Refuted, Unconfirmed)
		}
		if e.Scenario == "" || e.Scenario != r.Scenario {
			t.Errorf("AppEvidence[%d] (%s on %s): scenario %q, but the rule's scenario is %q", i, e.Rule, e.App, e.Scenario, r.Scenario)
		}
		if e.App == "" || e.Version == "" || e.Detail == "" || e.Cluster == "" || e.Date == "" {
			t.Errorf("AppEvidence[%d] (%s): app, version, detail, cluster and date are all needed: %+v", i, e.Rule, e)
		}
		if _, err := time.Parse(time.DateOnly, e.Date); err != nil {
			t.Errorf("AppEvidence[%d] (%s on %s): date: %v", i, e.Rule, e.App, err)
		}
	}
}

// TestSeverityBasisRestsOnRuns: a severity basis is written only for a rule some recorded run speaks
// to, and every rule a run confirmed or refuted on a real app has one.
func TestSeverityBasisRestsOnRuns(t *testing.T) {
	ran := map[string]bool{}
	for _, e := range AppEvidence {
		ran[e.Rule] = true
		if (e.Outcome == Confirmed || e.Outcome == Refuted) && SeverityBasis[e.Rule] == "" {
			t.Errorf("%s was %s on %s but RULES.md says nothing of what that means for its severity", e.Rule, e.Outcome, e.App)
		}
	}
	for id := range SeverityBasis {
		if !ran[id] {
			t.Errorf("severity basis for %s, which no recorded run speaks to", id)
		}
	}
}
