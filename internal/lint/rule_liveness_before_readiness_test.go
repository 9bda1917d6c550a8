package lint

import (
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/verdict"
)

// TestLivenessBeforeReadinessPassShowsLittle: short-freeze thaws the pod 2 s after readiness's worst
// withdrawal. When liveness always fires by then (podinfo's identical windows), a PASS refutes the
// PG002 finding; when liveness may fire only after the thaw, a PASS is the probes' phase as much as
// the timing, and lint --confirm calls it inconclusive.
func TestLivenessBeforeReadinessPassShowsLittle(t *testing.T) {
	probes := func(live string) string {
		return "        image: web:1\n        ports: [{name: http, containerPort: 8080}]\n" +
			"        readinessProbe: {httpGet: {path: /ready, port: http}, periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 2}\n" +
			"        livenessProbe: {httpGet: {path: /live, port: http}, " + live + "}\n"
	}
	for _, c := range []struct {
		name, live string
		little     bool
	}{
		// Readiness withdraws by 21 s + 2 s propagation; the freeze thaws at 25 s.
		{"liveness always fires before the thaw (latest 21 s)", "periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 2", false},
		{"liveness may fire after the thaw (latest 31 s)", "periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 3", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv, err := Parse("web.yaml", []byte(realManifest("Deployment", "web", "3", "", probes(c.live), svcHTTP)))
			if err != nil {
				t.Fatal(err)
			}
			fs := only(Lint(inv, Config{}), "PG002")
			if len(fs) != 1 {
				t.Fatalf("PG002 findings %v, want one", fs)
			}
			f := fs[0]
			if got := f.PassShowsLittle != ""; got != c.little {
				t.Errorf("PassShowsLittle %q, want set: %v", f.PassShowsLittle, c.little)
			}
			r, _ := RuleByID("PG002")
			pass := ScenarioRun{Scenario: "short-freeze", Verdicts: []ScenarioVerdict{{Rule: "no-liveness-restarts", Status: verdict.Pass}}}
			got := Confirm(r, &f, pass)
			want := Refuted
			if c.little {
				want = Unconfirmed
			}
			if got.Status != want || (c.little && !strings.Contains(got.Why, "does not refute it")) {
				t.Errorf("a PASS of short-freeze: %s (%s), want %s", got.Status, got.Why, want)
			}
		})
	}
}
