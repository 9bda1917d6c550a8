package profile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/scenarios"
)

func TestParse(t *testing.T) {
	p, err := Parse("p.yaml", []byte("name: release\nscenarios: [rollout, pod-delete-under-load]\nbudget: 8m\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "release" || p.Budget != 8*time.Minute || !slices.Equal(p.Scenarios, []string{"rollout", "pod-delete-under-load"}) || p.File != "p.yaml" {
		t.Errorf("Parse = %+v", p)
	}
}

// A bad profile file is one line naming the file and what is wrong.
func TestParseBad(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"malformed", "name: x\nscenarios: [rollout\n", "profile p.yaml: line 1: did not find expected ',' or ']'"},
		{"unknown field", "name: x\nscenario: [rollout]\nbudget: 1m\n", "profile p.yaml: line 2: unknown field scenario (known: name, scenarios, budget)"},
		{"no name", "scenarios: [rollout]\nbudget: 1m\n", "profile p.yaml: name: missing"},
		{"no scenarios", "name: x\nbudget: 1m\n", "profile p.yaml: scenarios: missing (scenario names or labels)"},
		{"no budget", "name: x\nscenarios: [rollout]\n", "profile p.yaml: budget: missing (a duration such as 10m)"},
		{"bad budget", "name: x\nscenarios: [rollout]\nbudget: 10 minutes\n", `profile p.yaml: budget: want a positive duration such as 10m, got "10 minutes"`},
		{"negative budget", "name: x\nscenarios: [rollout]\nbudget: -1m\n", `profile p.yaml: budget: want a positive duration such as 10m, got "-1m"`},
		{"empty entry", "name: x\nscenarios: [rollout, '']\nbudget: 1m\n", "profile p.yaml: scenarios[1]: empty"},
		{"scenarios not a list", "name: x\nscenarios: rollout\nbudget: 1m\n", "profile p.yaml: line 2: cannot unmarshal !!str `rollout` into []string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %q\nwant %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	if p, err := Load("gate"); err != nil || p.Name != "gate" || p.Budget != 10*time.Minute {
		t.Errorf("Load(gate) = %+v, %v", p, err)
	}
	_, err := Load("release")
	if want := `unknown profile "release" (known: gate, nightly; or a profile file ending in .yaml)`; err == nil || err.Error() != want {
		t.Errorf("Load(release) = %v, want %s", err, want)
	}
	file := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(file, []byte("name: mine\nscenarios: [node]\nbudget: 1h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := Load(file); err != nil || p.Name != "mine" || p.File != file {
		t.Errorf("Load(%s) = %+v, %v", file, p, err)
	}
}

func testCatalogue(t *testing.T) *scenario.Catalogue {
	t.Helper()
	cat, _, err := scenarios.Load(scenarios.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func names(scs []*scenario.Scenario) []string {
	var out []string
	for _, s := range scs {
		out = append(out, s.Name)
	}
	return out
}

// Entries are scenario names or labels; the result is in catalogue order, each scenario once.
func TestSelect(t *testing.T) {
	cat := testCatalogue(t)
	p := Profile{Name: "x", Scenarios: []string{"node", "pod-delete-under-load", "node-drain"}}
	scs, err := p.Select(cat)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(scs), []string{"node-drain", "node-loss", "pod-delete-under-load", "zone-spread"}; !slices.Equal(got, want) {
		t.Errorf("Select = %v, want %v", got, want)
	}
	_, err = Profile{Name: "x", Scenarios: []string{"rollouts"}}.Select(cat)
	if err == nil || !strings.HasPrefix(err.Error(), `profile x: "rollouts" is neither a scenario nor a label (labels: deletion, dependency, liveness, node, readiness, rollout, startup;`) {
		t.Errorf("unknown entry: %v", err)
	}
}

// The built-in profiles name catalogue scenarios: gate the one-node rollout, deletion and
// readiness scenarios, nightly the whole catalogue.
func TestBuiltins(t *testing.T) {
	cat := testCatalogue(t)
	gate, _ := Builtin("gate")
	scs, err := gate.Select(cat)
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) != len(gate.Scenarios) {
		t.Errorf("gate selects %v of %v", names(scs), gate.Scenarios)
	}
	for _, sc := range scs {
		if !sc.HasLabel("rollout") && !sc.HasLabel("deletion") && !sc.HasLabel("readiness") {
			t.Errorf("gate runs %s, labelled %v: not a rollout, deletion or readiness scenario", sc.Name, sc.Labels)
		}
		if sc.Target.Nodes > 1 {
			t.Errorf("gate runs %s, which needs %d nodes", sc.Name, sc.Target.Nodes)
		}
	}
	for _, sc := range cat.Scenarios {
		wanted := (sc.HasLabel("rollout") || sc.HasLabel("deletion") || sc.HasLabel("readiness")) && sc.Target.Nodes <= 1
		if wanted && !slices.Contains(gate.Scenarios, sc.Name) {
			t.Errorf("gate leaves out %s (%v), a one-node rollout, deletion or readiness scenario", sc.Name, sc.Labels)
		}
	}
	nightly, _ := Builtin("nightly")
	if scs, err := nightly.Select(cat); err != nil || len(scs) != len(cat.Scenarios) {
		t.Errorf("nightly selects %d of %d scenarios (%v)", len(scs), len(cat.Scenarios), err)
	}
}
