package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// deadKubeconfig names an API server that does not answer: a run that got past the budget check
// stops there, and a unit test never reaches for the local kind cluster.
func deadKubeconfig(t *testing.T) string {
	return writeRunInput(t, "kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: dead, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: dead, context: {cluster: dead, user: u}}]
current-context: dead
`)
}

// A bad profile, an unknown one, or a chosen set over its budget ends with exit 2 and one line,
// before any cluster is contacted.
func TestRunProfileRefusesWithOneLine(t *testing.T) {
	dead := deadKubeconfig(t)
	badFile := writeRunInput(t, "gate.yaml", "name: mine\nscenarios: [rollout]\nbudget: soon\n")
	unknownEntry := writeRunInput(t, "gate.yaml", "name: mine\nscenarios: [rollouts]\nbudget: 10m\n")
	tight := writeRunInput(t, "gate.yaml", "name: tight\nscenarios: [deletion, cold-start]\nbudget: 2m\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown profile", []string{"run", "--profile", "release"}, `probegate: unknown profile "release" (known: gate, nightly; or a profile file ending in .yaml)`},
		{"bad profile file", []string{"run", "--profile", badFile}, "probegate: profile " + badFile + `: budget: want a positive duration such as 10m, got "soon"`},
		{"missing profile file", []string{"run", "--profile", "/nonexistent/gate.yaml"}, "probegate: read profile: open /nonexistent/gate.yaml"},
		{"unknown entry", []string{"run", "--profile", unknownEntry}, `probegate: profile mine: "rollouts" is neither a scenario nor a label`},
		{"with scenario", []string{"run", "--profile", "gate", "--scenario", "overload"}, "probegate: --profile chooses the scenarios: it cannot be combined with --scenario"},
		{"bad budget", []string{"run", "--profile", "gate", "--budget", "0s"}, "probegate: --budget 0s: must be positive"},
		{"over budget", []string{"run", "--profile", "gate", "--budget", "5m", "--parallel", "2"},
			"probegate: profile gate: the chosen scenarios take about 7m42s with 2 side by side, over the 5m0s budget: drop "},
		{"file over budget", []string{"run", "--profile", tight, "--parallel", "1"}, "probegate: profile tight: the chosen scenarios take about "},
		{"budget without profile", []string{"run", "--scenario", "process-freeze", "--scenario", "cold-start", "--budget", "1m", "--parallel", "2"},
			"probegate: run: the chosen scenarios take about 1m32s with 2 side by side, over the 1m0s budget: drop "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, append(tc.args, "--kubeconfig", dead)...)
			if code != ExitError {
				t.Errorf("exit %d, want %d (stderr %q)", code, ExitError, stderr)
			}
			if !strings.HasPrefix(stderr, tc.want) {
				t.Errorf("stderr\n got: %q\nwant: %q…", stderr, tc.want)
			}
			if n := strings.Count(stderr, "\n"); n != 1 {
				t.Errorf("stderr has %d lines, want 1: %q", n, stderr)
			}
			if strings.Contains(stderr, "unreachable") || stdout != "" {
				t.Errorf("the run went past the check (stdout %q)", stdout)
			}
		})
	}
}

// Within its budget, the run says what it chose and what it leaves out (NOT APPLICABLE, with
// why), then goes on to the cluster.
func TestRunProfileWithinBudget(t *testing.T) {
	dead := deadKubeconfig(t)
	appYAML, _ := filepath.Abs("../deploy/testdata/app/app.yaml")
	noDB := writeRunInput(t, "target.yaml", "name: app\nmanifests: ["+appYAML+"]\nworkload: deployment/web\nservice: web\n")
	code, stdout, stderr := runMain(t, "run", "--profile", "gate", "--target", noDB, "--parallel", "2", "--kubeconfig", dead)
	if code != ExitError || !strings.Contains(stderr, "unreachable") {
		t.Fatalf("exit %d, stderr %q: want the dead cluster reached after the check", code, stderr)
	}
	for _, want := range []string{"profile gate: ", " side by side), within the 10m0s budget",
		"NOT APPLICABLE (reported, not run): ", "db-outage (faults[0] db-down: ", "event-loop-stall (faults[0] stall: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout %q lacks %q", stdout, want)
		}
	}
	if strings.Count(stdout, "\n") != 1 {
		t.Errorf("the check says more than one line: %q", stdout)
	}
}
