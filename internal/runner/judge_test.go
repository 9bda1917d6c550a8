package runner

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/internal/verdict/verdicttest"
	"github.com/probegate/probegate/scenarios"
)

// flappingRun is the audit's paper timeline (1) for flapping-dependency: the load runs from 5 s to
// 55 s on the timeline, three pods stay ready throughout, and nothing restarts. Fault 0 runs its
// full 3 s; its revert's proof holds the schedule until load time 32 s, so fault 1 (due at 18 s) is
// injected at 32 s and reverted 0.2 s later, fault 2 (due at 26 s) likewise at 45 s, and fault 3
// (due at 34 s) leaves whatever the schedule recorded for it (nothing, before issue #27 item 3).
func flappingRun(fault3 ...timeline.Entry) *verdicttest.Builder {
	const load = 5 * time.Second
	b := verdicttest.New().Ready(time.Second, "a", "b", "c")
	db := func(t time.Duration, action, name string, params map[string]string) {
		b.Entry(timeline.Entry{T: load + t, Kind: timeline.KindFault, Fault: &timeline.FaultAction{
			Type: "db-down", Name: name, Action: action, Target: "db", Params: params}})
	}
	confirmed := map[string]string{timeline.ParamEffect: timeline.EffectConfirmed, timeline.ParamPhase: timeline.PhaseDuring}
	for _, f := range []struct {
		name     string
		from, to time.Duration
	}{
		{"faults[0]", 10 * time.Second, 13 * time.Second},
		{"faults[1]", 32 * time.Second, 32200 * time.Millisecond},
		{"faults[2]", 45 * time.Second, 45200 * time.Millisecond},
	} {
		db(f.from, timeline.FaultInject, f.name, nil)
		db(f.from+50*time.Millisecond, timeline.FaultObserve, f.name, confirmed)
		db(f.to, timeline.FaultRevert, f.name, nil)
	}
	for _, e := range fault3 {
		b.Entry(e)
	}
	b.Traffic(load, load+50*time.Second, 10)
	return b
}

func fixturePod() *corev1.Pod {
	return probedPod(&corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 1, FailureThreshold: 2, TimeoutSeconds: 1})
}

// A fault the schedule never reached, and two squeezed to 0.2 s of their declared 3 s, must not let
// flapping-dependency PASS: before issue #27 item 3 every verdict PASSed on this timeline.
func TestJudgeDeclaredFaultsNeverReachedOrSqueezed(t *testing.T) {
	cat, _, err := scenarios.Load(scenarios.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := cat.Get("flapping-dependency")
	if !ok {
		t.Fatal("no flapping-dependency in the catalogue")
	}
	b := flappingRun()
	in := judgeInput{Scenario: sc, Entries: b.Entries(), Requests: b.Requests(), Pod: fixturePod(),
		LoadStart: 5 * time.Second, LoadEnd: 55 * time.Second}
	_, results, err := verdictJudge{}.Judge(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(sc.Expect) {
		t.Fatalf("%d results for %d expectations", len(results), len(sc.Expect))
	}
	for i, res := range results {
		unshown := strings.Join(res.Unshown, "\n")
		t.Logf("%s: %s (%s)\n  unshown: %s", res.Rule, res.Status, res.Observed, unshown)
		wants := []string{
			"db-down (faults[1]) ran 0.2s of its declared 3s: injected 14s late",
			"db-down (faults[2]) ran 0.2s of its declared 3s: injected 19s late",
			"db-down (faults[3]) left no trace on the timeline",
		}
		switch sc.Expect[i].Params["fault"] {
		case "faults[0]":
			continue // judges only the first drop, which ran in full: it may PASS
		case "faults[3]":
			wants = wants[2:] // judges only the last drop, which never ran
		}
		if res.Status != verdict.Inconclusive {
			t.Errorf("%s is %s, want INCONCLUSIVE: faults[3] never ran and faults[1], faults[2] ran 0.2 s of 3 s", res.Rule, res.Status)
			continue
		}
		for _, want := range wants {
			if !strings.Contains(unshown, want) {
				t.Errorf("%s: unshown lacks %q", res.Rule, want)
			}
		}
	}
}
