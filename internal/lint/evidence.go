package lint

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Evidence is one hand-recorded `probegate lint <manifests> --target <file> --confirm` run of a
// rule's finding on a real application.
type Evidence struct {
	Rule     string // rule ID, "PG002"
	App      string // application name, "podinfo"
	Version  string // application version the manifests deploy
	Outcome  string // Confirmed, Refuted or Unconfirmed ("inconclusive")
	Scenario string // the rule's scenario, as run
	Detail   string // what the verdicts showed, in a clause
	Cluster  string // where it ran
	Date     string // YYYY-MM-DD
}

// AppEvidence lists the recorded runs on real applications (examples/), oldest first.
var AppEvidence = []Evidence{
	{Rule: "PG002", App: "podinfo", Version: "6.9.2", Outcome: Confirmed, Scenario: "short-freeze",
		Detail:  "no-liveness-restarts FAILed (1 liveness restart)",
		Cluster: "local kind cluster", Date: "2026-12-03"},
	{Rule: "PG009", App: "podinfo", Version: "6.9.2", Outcome: Refuted, Scenario: "pod-delete-under-load",
		Detail: "failed-requests-budget and terminating-before-exit PASSed, every fault-effect verdict PASSed and none " +
			"was INCONCLUSIVE: podinfo fails /readyz and keeps serving 3 s after SIGTERM, a delay the manifest cannot show",
		Cluster: "local kind cluster", Date: "2026-12-03"},
	{Rule: "PG009", App: "miniflux", Version: "2.3.5", Outcome: Confirmed, Scenario: "pod-delete-under-load",
		Detail: "failed-requests-budget FAILed (4 of 1200 failed, during termination) and terminating-before-exit " +
			"FAILed (exited 510 ms after its withdrawal, < 2 s)",
		Cluster: "local kind cluster", Date: "2026-12-03"},
	{Rule: "PG002", App: "miniflux", Version: "2.3.5", Outcome: Confirmed, Scenario: "short-freeze",
		Detail:  "no-liveness-restarts FAILed (1 liveness restart)",
		Cluster: "local kind cluster", Date: "2026-12-03"},
	{Rule: "PG006", App: "miniflux", Version: "2.3.5", Outcome: Unconfirmed, Scenario: "db-slowness",
		Detail: "the finding is on deployment/db (pg_isready with a 1 s timeout), but the target file runs " +
			"deployment/miniflux, not deployment/db",
		Cluster: "local kind cluster", Date: "2026-12-03"},
	{Rule: "PG002", App: "etcd", Version: "3.6.0", Outcome: Confirmed, Scenario: "short-freeze",
		Detail:  "no-liveness-restarts FAILed (1 liveness restart: liveness fires 20–35 s into a stall, readiness withdraws only after up to 2 m 35 s)",
		Cluster: "local kind cluster", Date: "2026-12-03"},
	{Rule: "PG003", App: "etcd", Version: "3.6.0", Outcome: Refuted, Scenario: "cold-start",
		Detail: "startup-not-killed PASSed: a boot held 25 s was not killed (the finding, info there, says liveness " +
			"waits 15 s + (F−1)·P = 35 s, past that)",
		Cluster: "local kind cluster", Date: "2026-12-03"},
	{Rule: "PG007", App: "etcd", Version: "3.6.0", Outcome: Unconfirmed, Scenario: "db-outage",
		Detail:  "etcd declares no dependency, so db-outage does not apply to it (and no verdict of db-outage judges PG007)",
		Cluster: "local kind cluster", Date: "2026-12-03"},
}

// MatrixRow is one row of the mutation matrix (scenarios/mutations.yaml): running Scenario against
// the bundled target's Variant must FAIL each of Verdicts (the designated rule, then its also rules).
type MatrixRow struct {
	Variant  string
	Scenario string
	Verdicts []string
}

// MatrixEvidence says that the matrix shows Rule on Variant: linting the variant's manifest finds
// Rule, and the matrix requires Scenario (the rule's own) to FAIL Verdicts (among those the rule
// predicts) on that variant in every `make test`.
type MatrixEvidence struct {
	Rule     string
	Variant  string
	Scenario string
	Verdicts []string
}

// ShownByMatrix lints each variant the rows name (read returns its manifest) with the default
// limits and returns, per rule in ID order, the rows that confirm its findings.
func ShownByMatrix(rows []MatrixRow, read func(variant string) ([]byte, error)) ([]MatrixEvidence, error) {
	found := map[string]map[string]bool{}
	for _, row := range rows {
		if found[row.Variant] != nil {
			continue
		}
		ids, err := variantRules(row.Variant, read)
		if err != nil {
			return nil, err
		}
		found[row.Variant] = ids
	}
	var out []MatrixEvidence
	for _, r := range Rules() {
		for _, row := range rows {
			if e, ok := matrixShows(r, row, found[row.Variant]); ok {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// variantRules lints one variant's manifest and returns the IDs of the rules it reports.
func variantRules(variant string, read func(string) ([]byte, error)) (map[string]bool, error) {
	raw, err := read(variant)
	if err != nil {
		return nil, fmt.Errorf("read fixture variant %s: %w", variant, err)
	}
	inv, err := Parse(filepath.Join("fixtures", "manifests", variant+".yaml"), raw)
	if err != nil {
		return nil, fmt.Errorf("parse fixture variant %s: %w", variant, err)
	}
	ids := map[string]bool{}
	for _, f := range Lint(inv, Config{}) {
		if f.Suppressed == nil {
			ids[f.RuleID] = true
		}
	}
	return ids, nil
}

// matrixShows reports whether row confirms r on its variant: the variant's findings (found) include
// r, the row runs r's scenario, and it FAILs a verdict r predicts.
func matrixShows(r *Rule, row MatrixRow, found map[string]bool) (MatrixEvidence, bool) {
	if !found[r.ID] || r.Scenario == "" || row.Scenario != r.Scenario {
		return MatrixEvidence{}, false
	}
	var verdicts []string
	for _, v := range row.Verdicts {
		if slices.Contains(r.Predicts, v) {
			verdicts = append(verdicts, v)
		}
	}
	if len(verdicts) == 0 {
		return MatrixEvidence{}, false
	}
	return MatrixEvidence{Rule: r.ID, Variant: row.Variant, Scenario: row.Scenario, Verdicts: verdicts}, true
}

// evidenceOf returns the matrix rows and recorded app runs about r.
func evidenceOf(r *Rule, matrix []MatrixEvidence) ([]MatrixEvidence, []Evidence) {
	var ms []MatrixEvidence
	for _, m := range matrix {
		if m.Rule == r.ID {
			ms = append(ms, m)
		}
	}
	var apps []Evidence
	for _, e := range AppEvidence {
		if e.Rule == r.ID {
			apps = append(apps, e)
		}
	}
	return ms, apps
}

// EvidenceSummary is r's evidence in a table cell: the matrix variants, then the apps by outcome,
// "—" when nothing.
func EvidenceSummary(r *Rule, matrix []MatrixEvidence) string {
	ms, apps := evidenceOf(r, matrix)
	var parts []string
	if len(ms) > 0 {
		var variants []string
		for _, m := range ms {
			if !slices.Contains(variants, m.Variant) {
				variants = append(variants, m.Variant)
			}
		}
		parts = append(parts, "matrix: "+strings.Join(variants, ", "))
	}
	for _, outcome := range []string{Confirmed, Refuted, Unconfirmed} {
		var names []string
		for _, e := range apps {
			if e.Outcome == outcome && !slices.Contains(names, e.App) {
				names = append(names, e.App)
			}
		}
		if len(names) > 0 {
			parts = append(parts, strings.Join(names, ", ")+" "+outcome)
		}
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "; ")
}

// EvidenceText is r's evidence in a paragraph: each matrix row that shows it, each recorded app run,
// or that none has.
func EvidenceText(r *Rule, matrix []MatrixEvidence) string {
	ms, apps := evidenceOf(r, matrix)
	if len(ms) == 0 && len(apps) == 0 {
		return "No run has confirmed or refuted this rule on a cluster yet; its severity rests on the reasoning above."
	}
	var sentences []string
	if len(ms) > 0 {
		var items []string
		for _, m := range ms {
			items = append(items, fmt.Sprintf("variant %s, where %s FAILs %s", m.Variant, m.Scenario, strings.Join(m.Verdicts, " and ")))
		}
		sentences = append(sentences, "Mutation matrix (scenarios/mutations.yaml, in every `make test`): "+strings.Join(items, "; ")+".")
	}
	for _, e := range apps {
		sentences = append(sentences, fmt.Sprintf("%s %s (%s, %s): %s by %s; %s.", e.App, e.Version, e.Cluster, e.Date, e.Outcome, e.Scenario, e.Detail))
	}
	if b := SeverityBasis[r.ID]; b != "" {
		sentences = append(sentences, "Severity "+r.Severity.String()+": "+b)
	}
	return strings.Join(sentences, " ")
}

// SeverityBasis says, for each rule the runs on real apps speak to, how that evidence bears on its
// severity.
var SeverityBasis = map[string]string{
	"PG002": "on every real app run a stall readiness alone would have ridden out ended in a liveness restart; " +
		"readiness had withdrawn the pod first, so the restart cost the pod's work in flight and a cold start, " +
		"not the Service's requests: a warning, not an error.",
	"PG009": "requests lost at exit on miniflux; refuted on podinfo, whose own code fails readiness and keeps serving " +
		"after SIGTERM, a delay no manifest shows: an error would fail such apps for what they already do, so a " +
		"warning, which `probegate.dev/withdrawal-seconds` answers by stating the delay.",
	"PG003": "from the matrix (no-startup-probe: cold-start's liveness kills pods still booting); on etcd the " +
		"finding was lowered to info because liveness waits past its 30 s budget, and cold-start refuted it (no " +
		"kill in a boot held 25 s): the lowering holds.",
	"PG006": "from the matrix (identical-probes: db-slowness restarts every pod and empties the Service); the one " +
		"real app's finding was on its database's own Deployment, which no scenario there loads.",
}
