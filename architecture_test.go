package probegate_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/probegate/probegate"

// importRule forbids the packages matched by from (go list patterns) to depend, directly or
// through others, on any package under a forbidden prefix.
type importRule struct {
	why       string
	from      []string
	forbidden []string
}

var importRules = []importRule{
	{
		why:       "the judging core stays pure: it reads recorded timelines, never a cluster",
		from:      []string{"./internal/timeline/...", "./internal/verdict/...", "./internal/oracle/...", "./internal/scenario/..."},
		forbidden: []string{"k8s.io/client-go"},
	},
	{
		why:       "data flows one way: faults, load and observers feed the timeline and know nothing of who runs or judges them",
		from:      []string{"./internal/faults/...", "./loadgen/...", "./observers/..."},
		forbidden: []string{module + "/internal/runner", module + "/internal/verdict", module + "/reports"},
	},
	{
		why:       "compare reads finished reports: it never runs, deploys or watches anything",
		from:      []string{"./internal/compare/..."},
		forbidden: []string{"k8s.io/client-go", module + "/internal/runner", module + "/internal/cluster", module + "/internal/deploy"},
	},
	{
		why:       "deployers install targets behind deploy.Deployer for the runner to call: they know nothing of the faults, load, observers, judging or reports that use what they installed",
		from:      []string{"./internal/deploy/..."},
		forbidden: []string{module + "/internal/runner", module + "/internal/faults", module + "/loadgen", module + "/observers", module + "/internal/verdict", module + "/reports"},
	},
	{
		why:       "a front door says how the load reaches the pods and what its own record says of each request: it knows nothing of the deployers, faults, load, judging or reports around it",
		from:      []string{"./internal/frontdoor/..."},
		forbidden: []string{module + "/internal/runner", module + "/internal/deploy", module + "/internal/faults", module + "/loadgen", module + "/internal/verdict", module + "/reports"},
	},
}

// TestArchitecture checks the import graph's layering with `go list`: the production imports of
// each package, transitively. Test files are not counted: verdict's and oracle's tests read
// fixtures/manifests, which decodes with client-go's scheme.
func TestArchitecture(t *testing.T) {
	for _, rule := range importRules {
		args := append([]string{"list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, rule.from...)
		out, err := exec.Command("go", args...).Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		matched := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			pkg := fields[0]
			for _, p := range rule.from {
				if strings.HasPrefix(pkg+"/", module+"/"+strings.TrimSuffix(strings.TrimPrefix(p, "./"), "...")) {
					matched[p] = true
				}
			}
			for _, f := range rule.forbidden {
				i := slices.IndexFunc(fields[1:], func(dep string) bool { return dep == f || strings.HasPrefix(dep, f+"/") })
				if i >= 0 {
					t.Errorf("%s imports %s (directly or through another package): %s", pkg, fields[1+i], rule.why)
				}
			}
		}
		// A renamed or moved package must not turn the rule into a silent no-op.
		for _, p := range rule.from {
			if !matched[p] {
				t.Errorf("pattern %s matches no package: update importRules", p)
			}
		}
	}
}

// runnerAPI is every name internal/runner exports: the runner orchestrates phases behind these
// (and estimates a run before it starts, for --budget) and keeps its parts (deployer, observers, load, faults, judge) unexported, tested on fakes inside it.
var runnerAPI = []string{"ClusterShape", "EstimateRun", "New", "Options", "Plan", "Progress", "Request", "RunEstimate", "Runner", "Setup"}

// TestRunnerExportsAHandful fails when internal/runner exports a package-level name beyond
// runnerAPI: a new seam or helper belongs unexported, or in the package whose concept it is.
func TestRunnerExportsAHandful(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("internal", "runner", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no runner sources: %v", err)
	}
	var got []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					got = append(got, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							got = append(got, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								got = append(got, n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, runnerAPI) {
		t.Errorf("internal/runner exports %v, want %v", got, runnerAPI)
	}
}
