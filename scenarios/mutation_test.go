package scenarios

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// TestIntegrationMutationMatrix runs each row of mutations.yaml: the anti-pattern variant must
// FAIL the named rule of the named scenario. A variant that passes means probegate cannot see the
// mistake it embodies, which is a harness bug. --feature picks rows by name ("mutation VARIANT ×
// SCENARIO") as it picks the catalogue's scenarios: --feature=node-loss runs node-loss and its rows
// (--labels=kind=scenario or kind=mutation keeps one of the two).
func TestIntegrationMutationMatrix(t *testing.T) {
	t.Parallel() // with the other of the suite and the matrix: one pool of the runner's slots
	s := requireSuite(t)
	var feats []features.Feature
	for _, mu := range s.matrix.Mutations {
		sc, _ := s.cat.Get(mu.Scenario)
		feats = append(feats, mutationFeature(s, mu, sc))
	}
	testenv.TestInParallel(t, feats...)
}

func mutationFeature(s *suiteEnv, mu scenario.Mutation, sc *scenario.Scenario) features.Feature {
	variantRun := *sc
	variantRun.Target.Variant = mu.Variant
	rules := mu.Rules()
	return features.New("mutation "+mu.Variant+" × "+mu.Scenario).
		WithLabel("kind", "mutation").
		WithLabel("variant", mu.Variant).
		Assess("run", runAssessment(s, &variantRun)).
		Assess(strings.Join(rules, ", ")+" must FAIL", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			rep, _ := ctx.Value(reportKey{}).(*reports.ScenarioReport)
			if rep == nil {
				t.Skip("the scenario did not run")
			}
			// A FAIL on a run whose faults did not act, or on "nothing to judge", shows nothing about
			// the variant: the row must fail for the variant's own mistake.
			if rep.Timeline != nil {
				for _, f := range timeline.FaultWindows(rep.Timeline.Entries()) {
					if note := f.Unproven(); note != "" {
						suite.fail(t, "variant %s × %s: %s — the run cannot show the anti-pattern", mu.Variant, mu.Scenario, note)
					}
				}
			} else {
				suite.fail(t, "variant %s × %s: the report has no timeline", mu.Variant, mu.Scenario)
			}
			for _, rule := range rules {
				v := rep.Verdicts[slices.Index(sc.Rules(), rule)]
				if strings.Contains(v.Observed, "nothing to judge") {
					suite.fail(t, "variant %s rule %s of %s FAILed with nothing to judge: %s", mu.Variant, rule, mu.Scenario, v.Observed)
					continue
				}
				if v.Status != verdict.Fail {
					suite.fail(t, "variant %s %s rule %s of %s (%s): the harness cannot see this anti-pattern (%s)%s",
						mu.Variant, v.Status, rule, mu.Scenario, mu.Why, v.Observed, unshownWords(v, rep))
					continue
				}
				t.Logf("variant %s FAILs %s as it must: %s", mu.Variant, rule, v.Observed)
			}
			if err := designatedEvidence(mu, rep); err != nil {
				suite.fail(t, "variant %s × %s: %v", mu.Variant, mu.Scenario, err)
			}
			return ctx
		}).
		Feature()
}

// designatedEvidence checks that the row's rules failed for the reasons the row names: the
// designated rule's observed line or one of its evidence notes matches the row's evidence pattern
// and, with pod: faulted, names the pod the fault acted on; each also rule's matches its own.
func designatedEvidence(mu scenario.Mutation, rep *reports.ScenarioReport) error {
	var faulted []string
	if rep.Timeline != nil {
		for _, f := range timeline.FaultWindows(rep.Timeline.Entries()) {
			if f.Target != "" {
				faulted = append(faulted, f.Target)
			}
		}
	}
	var errs []error
	if err := ruleEvidence(rep, mu.Rule, mu.Evidence, mu.Pod == "faulted", faulted); err != nil {
		errs = append(errs, err)
	}
	for _, a := range mu.Also {
		if err := ruleEvidence(rep, a.Rule, a.Evidence, false, nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ruleEvidence checks that rule's observed line or one of its evidence notes matches pattern and,
// when namePod, names one of the faulted pods.
func ruleEvidence(rep *reports.ScenarioReport, rule, pattern string, namePod bool, faulted []string) error {
	var v *verdict.Result
	for i := range rep.Verdicts {
		if rep.Verdicts[i].Rule == rule {
			v = &rep.Verdicts[i]
		}
	}
	if v == nil {
		return fmt.Errorf("no verdict of rule %s in the report", rule)
	}
	re := regexp.MustCompile(pattern)
	lines := []string{v.Observed}
	for _, ev := range v.Evidence {
		lines = append(lines, ev.Note)
	}
	for _, line := range lines {
		if !re.MatchString(line) {
			continue
		}
		if !namePod || slices.ContainsFunc(faulted, func(pod string) bool { return strings.Contains(line, pod) }) {
			return nil
		}
	}
	if namePod {
		return fmt.Errorf("rule %s: no observation matches %q and names the faulted pod %v (observed: %s)", rule, pattern, faulted, strings.Join(lines, " | "))
	}
	return fmt.Errorf("rule %s: no observation matches %q, the designated evidence (observed: %s)", rule, pattern, strings.Join(lines, " | "))
}

// unshownWords is what an INCONCLUSIVE row could not show, and the capacity its overload was sized
// from, for the failure line: CI keeps only a part of the output.
func unshownWords(v verdict.Result, rep *reports.ScenarioReport) string {
	var out string
	if len(v.Unshown) > 0 {
		out += "; unshown: " + strings.Join(v.Unshown, "; ")
	}
	if rep.Capacity != nil {
		out += "; " + rep.Capacity.String()
	}
	return out
}
