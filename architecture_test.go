package probegate_test

import (
	"os/exec"
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
		why:       "deployers install targets behind deploy.Deployer for the runner to call: they know nothing of the faults, load, observers, judging or reports that use what they installed",
		from:      []string{"./internal/deploy/..."},
		forbidden: []string{module + "/internal/runner", module + "/internal/faults", module + "/loadgen", module + "/observers", module + "/internal/verdict", module + "/reports"},
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
