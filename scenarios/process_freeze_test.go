package scenarios

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// goodOracle is the oracle of fixtures/manifests/good.yaml's target container: readiness P=1 s F=2,
// liveness P=5 s F=3, each with a 1 s timeout, startupProbe 60×1 s, grace 25 s, and its lag
// annotations. It gives: readiness detection [1 s, 4 s] + 2 s propagation, recovery by 4.7 s,
// liveness restart [10 s, 19 s] + 25 s grace + 2 s restart = by 46 s after the fault starts.
func goodOracle(t *testing.T) oracle.Oracle {
	t.Helper()
	probe := func(path string, period, failure int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
			PeriodSeconds: period, TimeoutSeconds: 1, FailureThreshold: failure, SuccessThreshold: 1,
		}
	}
	grace := int64(25)
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: &grace,
		Containers: []corev1.Container{{
			Name:           vt.Container,
			StartupProbe:   probe("/health/startup", 1, 60),
			ReadinessProbe: probe("/health/ready", 1, 2),
			LivenessProbe:  probe("/health/live", 5, 3),
		}},
	}
	o, err := oracle.Compute(spec, map[string]string{
		oracle.AnnotationReadinessLag: "1s", oracle.AnnotationRecoveryLag: "700ms", oracle.AnnotationLivenessLag: "3s",
		oracle.AnnotationWithdrawal: "5", oracle.AnnotationDrain: "10",
	}, oracle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// The audit's N1 paper timeline, judged by the catalogue's own process-freeze expectations (and the
// default rules it appends): pod a is frozen, withdrawn, and restarted by liveness in its window.
// The good target is ready again a few seconds after the restart; a target whose new container never
// becomes ready, or is killed by liveness again and again, must not PASS the scenario.
func TestProcessFreezeJudgesTheRestartedPod(t *testing.T) {
	c, _, err := Load(Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := c.Get("process-freeze")
	if !ok {
		t.Fatal("no process-freeze scenario")
	}
	if len(sc.Faults) != 1 || sc.Faults[0].Type != "freeze" {
		t.Fatalf("process-freeze faults = %+v", sc.Faults)
	}
	const s = time.Second
	at, end := sc.Faults[0].At, sc.Faults[0].End()
	loadEnd := sc.Load.Duration
	// run is the freeze of pod a as the good target's probes see it; then adds what follows the
	// liveness restart at restart (offsets from the load's start at 0).
	run := func(restart time.Duration, then func(b *vt.Builder)) *vt.Builder {
		b := vt.New().Oracle(goodOracle(t))
		for _, p := range []string{"a", "b", "c"} {
			b.Created(-30*s, p).ContainerReady(-25*s, p)
		}
		b.Ready(-25*s, "a", "b", "c").Traffic(0, loadEnd, 30).LoadSpan(0, loadEnd).
			Inject(at, "freeze", "a").NotReady(at+2200*time.Millisecond, "a").
			Restart(restart, "a", timeline.CauseLiveness)
		then(b)
		b.Revert(end, "freeze", "a")
		// The settle's last entry: the run is observed until the load's end + settle.
		b.Entry(timeline.Entry{T: loadEnd + sc.Settle, Kind: timeline.KindMark, Mark: &timeline.Mark{Name: "settle-end"}})
		return b
	}
	cases := []struct {
		name string
		run  *vt.Builder
		pass bool
		fail []string // rules that must FAIL
	}{
		{name: "good target, restart at 46 s, ready 6 s later",
			run: run(46*s, func(b *vt.Builder) { b.Ready(52*s, "a") }), pass: true},
		{name: "good target, restart at the window's end, ready 9 s later",
			run: run(at+46*s, func(b *vt.Builder) { b.Ready(at+55*s, "a") }), pass: true},
		{name: "never ready again after the restart",
			run: run(46*s, func(*vt.Builder) {}), fail: []string{"recovery-within"}},
		{name: "liveness restart loop",
			run: run(46*s, func(b *vt.Builder) {
				b.Ready(52*s, "a").NotReady(60*s, "a").Restart(64*s, "a", timeline.CauseLiveness).Ready(69*s, "a")
			}),
			fail: []string{"no-unexpected-restarts", "liveness-restart-in-window"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.run.Input()
			failed := map[string]string{}
			for _, e := range sc.Expect {
				res, err := verdict.Evaluate(in, verdict.Spec{Rule: e.Rule, Params: e.Params, Tolerance: e.Tolerance})
				if err != nil {
					t.Fatalf("%s: %v", e.Rule, err)
				}
				if res.Status != verdict.Pass {
					failed[e.Rule] = string(res.Status) + ": " + res.Observed
				}
			}
			if tc.pass {
				for r, why := range failed {
					t.Errorf("%s did not PASS: %s", r, why)
				}
				return
			}
			if len(failed) == 0 {
				t.Fatalf("process-freeze PASSes: every rule of %s passed", strings.Join(sc.Rules(), ", "))
			}
			for _, r := range tc.fail {
				if !strings.HasPrefix(failed[r], string(verdict.Fail)) {
					t.Errorf("%s: want FAIL, got %q", r, failed[r])
				}
			}
		})
	}
}
