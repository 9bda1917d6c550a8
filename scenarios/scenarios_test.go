package scenarios

import (
	"context"
	"testing"

	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

type reportKey struct{}

// TestIntegrationScenarios runs every catalogue scenario against the good target: each is one
// feature, each expected verdict one assessment that must PASS.
func TestIntegrationScenarios(t *testing.T) {
	t.Parallel() // with the other of the suite and the matrix: one pool of the runner's slots
	s := requireSuite(t)
	var feats []features.Feature
	for _, sc := range s.cat.Scenarios {
		feats = append(feats, scenarioFeature(s, sc))
	}
	testenv.TestInParallel(t, feats...)
}

func scenarioFeature(s *suiteEnv, sc *scenario.Scenario) features.Feature {
	b := features.New(sc.Name).
		WithLabel("kind", "scenario").
		WithLabel("variant", sc.Target.Variant).
		Assess("run", runAssessment(s, sc))
	for i, e := range sc.Expect {
		b = b.Assess(e.Rule, verdictAssessment(i, e.Rule, verdict.Pass))
	}
	return b.Feature()
}

// runAssessment runs the scenario and hands its report to the verdict assessments.
func runAssessment(s *suiteEnv, sc *scenario.Scenario) features.Func {
	return func(ctx context.Context, t *testing.T, _ *envconf.Config) context.Context {
		if sc.Target.Nodes > s.schedulable {
			t.Skipf("%s needs %d schedulable nodes; the cluster has %d (make test runs it in its multi-node phase)", sc.Name, sc.Target.Nodes, s.schedulable)
		}
		rep := s.run(ctx, sc)
		t.Logf("%s: namespace %s, %d requests, replay: %s", sc.Name, rep.Namespace, len(rep.Requests), rep.Replay)
		if rep.Error != "" {
			s.fail(t, "harness error: %s", rep.Error)
			t.FailNow()
		}
		return context.WithValue(ctx, reportKey{}, rep)
	}
}

// verdictAssessment checks that the i-th expectation ended with want.
func verdictAssessment(i int, rule string, want verdict.Status) features.Func {
	return func(ctx context.Context, t *testing.T, _ *envconf.Config) context.Context {
		rep, _ := ctx.Value(reportKey{}).(*reports.ScenarioReport)
		if rep == nil {
			t.Skip("the scenario did not run")
		}
		if i >= len(rep.Verdicts) {
			t.Fatalf("no verdict for %s", rule)
		}
		v := rep.Verdicts[i]
		if v.Rule != rule {
			t.Fatalf("verdict %d is %s, expected %s", i, v.Rule, rule)
		}
		if v.Status != want {
			suite.fail(t, "%s: %s, want %s\n%s", rule, v.Status, want, reports.FailureMessage(v))
		} else {
			t.Logf("%s %s: %s", rule, v.Status, v.Observed)
		}
		return ctx
	}
}
