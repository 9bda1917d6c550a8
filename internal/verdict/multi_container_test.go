package verdict_test

import (
	"testing"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// Audit N10: in a pod with a sidecar, the rules judge the app's container (the oracle's: the one
// whose probes are under test); the sidecar's exit or readiness does not stand in for it. Each
// paper timeline here passed before.
func TestMultiContainerPods(t *testing.T) {
	cases := []struct {
		name     string
		rule     string
		run      *vt.Builder
		want     verdict.Status
		at       time.Duration
		evidence string
	}{
		// The sidecar exits cleanly at once; the app is SIGKILLed at the end of its grace.
		{name: "sidecar's clean exit hides the app's SIGKILL", rule: "no-forced-kill", want: verdict.Fail, at: 20 * s,
			evidence: "a forced: exit code 137",
			run: base().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 10*s).Terminating(ms(10050), "a").
				ExitedContainer(ms(10300), "a", "log-shipper", 0).Exited(20*s, "a", 137)},
		// The sidecar is ready at 3 s; the app is killed by liveness at 8 s before it was ever ready.
		{name: "sidecar's readiness hides the app's bootstrap kill", rule: "startup-not-killed", want: verdict.Fail, at: 8 * s,
			evidence: "d container app (restart #1) killed by liveness before it was ready",
			run: base().Created(2*s, "d").ContainerReadyOf(3*s, "d", "log-shipper").
				Restart(8*s, "d", timeline.CauseLiveness).ContainerReady(20*s, "d")},
		// An oracle that names no container: the run's workload entry does.
		{name: "the workload entry names the app's container", rule: "no-forced-kill", want: verdict.Fail, at: 20 * s,
			evidence: "a forced: exit code 137",
			run: base().Oracle(noContainer()).Placement().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 10*s).Terminating(ms(10050), "a").
				ExitedContainer(ms(10300), "a", "log-shipper", 0).Exited(20*s, "a", 137)},
		// Controls: the app's own readiness before the kill still counts, and so does the pod's.
		{name: "app ready before its liveness kill", rule: "startup-not-killed", want: verdict.Pass,
			run: base().Created(2*s, "d").ContainerReadyOf(3*s, "d", "log-shipper").ContainerReady(5*s, "d").
				Restart(30*s, "d", timeline.CauseLiveness).ContainerReady(35*s, "d")},
		{name: "app's clean exit after the sidecar's", rule: "no-forced-kill", want: verdict.Pass,
			run: base().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 10*s).Terminating(ms(10050), "a").
				ExitedContainer(ms(10300), "a", "log-shipper", 0).Exited(14*s, "a", 0)},
	}
	for _, c := range cases {
		t.Run(c.rule+"/"+c.name, func(t *testing.T) {
			res, err := verdict.Evaluate(c.run.Input(), verdict.Spec{Rule: c.rule})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.want {
				t.Fatalf("%s, want %s: %s (evidence %+v)", res.Status, c.want, res.Observed, res.Evidence)
			}
			if c.want == verdict.Fail && (res.At == nil || *res.At != c.at) {
				t.Errorf("at %v, want %s", res.At, c.at)
			}
			if c.evidence != "" && !hasEvidence(res, c.evidence) {
				t.Errorf("no evidence with %q: %+v", c.evidence, res.Evidence)
			}
		})
	}
}

// noContainer is the default oracle without its container's name.
func noContainer() oracle.Oracle {
	o := vt.DefaultOracle()
	o.Container = ""
	return o
}
