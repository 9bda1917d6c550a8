package verdict_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// Paper timelines of scenarios/cold-start.yaml and pod-delete-under-load against the bundled good
// target's oracle (readiness P=1s F=2 timeout 1s, recovery lag 0.7s → recovery by 4.7s; startupProbe
// 60×1s). Each case that is not a PASS PASSed before the fix of the audit finding it names (N2, N5).

// good is the good target's oracle, reading the builder's container.
func good(t *testing.T) oracle.Oracle {
	o := goodOracle(t, oracle.Options{})
	o.Container = vt.Container
	return o
}

// twoOld is the cold-start target before the fault: pods old-a and old-b created at 0, booted in
// 5s, ready at 6s, with the load from 7s and the cold-start fault injected at 12s (5s into it).
func twoOld(t *testing.T) *vt.Builder {
	b := vt.New().Oracle(good(t)).LoadSpan(7*s, 82*s)
	for _, p := range []string{"old-a", "old-b"} {
		b.Created(0, p).Started(5*s, p).ContainerReady(6*s, p)
	}
	return b.Ready(ms(6500), "old-a", "old-b").Inject(12*s, "cold-start", "")
}

// end marks the run's last entry.
func end(b *vt.Builder, at time.Duration) *vt.Builder {
	return b.Entry(timeline.Entry{T: at, Kind: timeline.KindMark, Mark: &timeline.Mark{Name: "end"}})
}

// goodRollout is the good target's cold start: each new pod boots 25s, then replaces one old pod;
// the env is restored at the load's end (82s), which starts a second rollout the run does not see end.
func goodRollout(t *testing.T) *vt.Builder {
	b := twoOld(t).
		Created(ms(12100), "new-1").NotReady(ms(12600), "new-1").Started(ms(37600), "new-1").ContainerReady(38*s, "new-1").Ready(ms(38500), "new-1").
		Deleting(ms(38600), "old-a", 25*s).Terminating(ms(38700), "old-a").
		Created(ms(38700), "new-2").NotReady(ms(39200), "new-2").Started(ms(64200), "new-2").ContainerReady(ms(64600), "new-2").Ready(65*s, "new-2").
		Deleting(ms(65100), "old-b", 25*s).Terminating(ms(65200), "old-b").
		Revert(82*s, "cold-start", "").Created(ms(82100), "restored-1")
	return end(b, 87*s)
}

// stuckRollout is the audit's N2: new-1 passes its startup probe at 37.6s but never turns ready;
// the old pods keep serving until the env is restored at 82s and new-1 is deleted.
func stuckRollout(t *testing.T) *vt.Builder {
	b := twoOld(t).
		Created(ms(12100), "new-1").NotReady(ms(12600), "new-1").Started(ms(37600), "new-1").
		Revert(82*s, "cold-start", "").Deleting(ms(82200), "new-1", 25*s).Removed(ms(82300), "new-1")
	return end(b, 87*s)
}

// shortRun ends (and restores the env) at 28s, while new-1 is still booting inside its budget.
func shortRun(t *testing.T) *vt.Builder {
	b := twoOld(t).LoadSpan(7*s, 28*s).
		Created(ms(12100), "new-1").NotReady(ms(12600), "new-1").
		Revert(28*s, "cold-start", "").Deleting(ms(28200), "new-1", 25*s)
	return end(b, 30*s)
}

// neverStarts: new-1 is killed by its startup probe again and again; the run lasts past the
// rollout's bound (2 × (2s + 60s + 4.7s) = 133.4s after the fault, at 145.4s).
func neverStarts(t *testing.T) *vt.Builder {
	b := twoOld(t).LoadSpan(7*s, 148*s).
		Created(ms(12100), "new-1").NotReady(ms(12600), "new-1").
		Restart(73*s, "new-1", timeline.CauseStartup).Restart(134*s, "new-1", timeline.CauseStartup).
		Revert(148*s, "cold-start", "").Deleting(ms(148200), "new-1", 25*s)
	return end(b, 150*s)
}

// oneShot is pod-delete-under-load with pods that booted in 6.5s (created at 0, ready at 6.5s, as
// the API dates them) and the deletion of old-a at 20s; the replacement new-1 is created at 20.1s.
func oneShot(t *testing.T) *vt.Builder {
	b := vt.New().Oracle(good(t)).LoadSpan(7*s, 47*s)
	for _, p := range []string{"old-a", "old-b", "old-c"} {
		b.Created(0, p).Started(6*s, p).ContainerReady(ms(6500), p)
	}
	return b.Ready(7*s, "old-a", "old-b", "old-c").
		Inject(20*s, "pod-delete", "old-a").Deleting(20*s, "old-a", 25*s).Terminating(ms(20800), "old-a").
		Created(ms(20100), "new-1")
}

func TestColdStartAndOneShotRecovery(t *testing.T) {
	cases := []struct {
		name     string
		rule     string
		params   map[string]string
		run      *vt.Builder
		want     verdict.Status
		at       time.Duration // when want is FAIL
		text     string        // substring of Observed, Expected or an Unshown line
		recovery float64       // recovery_s when > 0
	}{
		// N2: recovery-within judges the cold-start rollout, from the inject, not the restore.
		{name: "good target: rollout complete 53.2s after the fault", rule: "recovery-within", params: map[string]string{"fault": "cold-start"},
			run: goodRollout(t), want: verdict.Pass, text: "rollout complete", recovery: 53.2},
		{name: "N2: new pod never ready after its startup probe passed", rule: "recovery-within", params: map[string]string{"fault": "cold-start"},
			run: stuckRollout(t), want: verdict.Fail, at: ms(42300), text: "stalled"},
		{name: "run too short to see the rollout end", rule: "recovery-within", params: map[string]string{"fault": "cold-start"},
			run: shortRun(t), want: verdict.Inconclusive, text: "too short"},
		{name: "rollout not complete when its bound passed", rule: "recovery-within", params: map[string]string{"fault": "cold-start"},
			run: neverStarts(t), want: verdict.Fail, at: ms(145400), text: "not complete"},

		// startup-not-killed counts only the cold pods, and needs the run to outlast their budget.
		{name: "good target: both cold pods booted", rule: "startup-not-killed",
			run: goodRollout(t), want: verdict.Pass, text: "2 of 2 pods created after the fault"},
		{name: "N2: no cold pod ever ready", rule: "startup-not-killed",
			run: stuckRollout(t), want: verdict.Fail, at: ms(72100), text: "no pod created after the fault"},
		{name: "run ended inside the cold pod's startup budget", rule: "startup-not-killed",
			run: shortRun(t), want: verdict.Inconclusive, text: "startup budget"},

		// N5: the one-shot bound is the pre-fault pods' boot (6.5s) × 1.5 + 2s + 4.7s = 16.45s.
		{name: "good target: replacement ready 6.5s after the deletion", rule: "recovery-within", params: map[string]string{"fault": "pod-delete"},
			run:  oneShot(t).Started(26*s, "new-1").ContainerReady(ms(26200), "new-1").Ready(ms(26500), "new-1"),
			want: verdict.Pass, text: "× 1.5 + 2s", recovery: 6.5},
		{name: "N5: bootstrap regressed 5s → 25s inside the startup budget", rule: "recovery-within", params: map[string]string{"fault": "pod-delete"},
			run:  oneShot(t).Started(46*s, "new-1").ContainerReady(ms(46200), "new-1").Ready(ms(46500), "new-1"),
			want: verdict.Fail, at: ms(46500), text: "LATE", recovery: 26.5},
	}
	for _, tc := range cases {
		t.Run(tc.rule+"/"+tc.name, func(t *testing.T) {
			res, err := verdict.Evaluate(tc.run.Input(), verdict.Spec{Rule: tc.rule, Params: tc.params})
			if err != nil {
				t.Fatal(err)
			}
			dump, _ := json.MarshalIndent(res, "", "  ")
			if res.Status != tc.want {
				t.Fatalf("status %s, want %s\n%s", res.Status, tc.want, dump)
			}
			words := res.Observed + " | " + res.Expected + " | " + strings.Join(res.Unshown, " | ")
			if !strings.Contains(words, tc.text) {
				t.Errorf("neither observed, expected nor unshown contains %q\n%s", tc.text, dump)
			}
			if tc.recovery > 0 {
				if got := res.Figures["recovery_s"]; got < tc.recovery-0.001 || got > tc.recovery+0.001 {
					t.Errorf("recovery_s = %v, want %v\n%s", got, tc.recovery, dump)
				}
			}
			switch {
			case tc.want == verdict.Fail && (res.At == nil || *res.At != tc.at):
				t.Errorf("At = %v, want %s\n%s", res.At, tc.at, dump)
			case tc.want != verdict.Fail && res.At != nil:
				t.Errorf("%s result has At %s", res.Status, *res.At)
			}
			t.Logf("%s: %s | expected %s", res.Status, res.Observed, res.Expected)
		})
	}
}

// upTo is b's entries up to t: the timeline as the runner reads it at t while the load runs.
func upTo(b *vt.Builder, t time.Duration) []timeline.Entry {
	var out []timeline.Entry
	for _, e := range b.Entries() {
		if e.T <= t {
			out = append(out, e)
		}
	}
	return out
}

// RolloutsComplete, which ends a load sized to a rollout's bound, sees a rollout complete exactly
// when recovery-within would: every endpoint in rotation a new pod, as many as before the fault.
func TestRolloutsComplete(t *testing.T) {
	for _, c := range []struct {
		name     string
		entries  []timeline.Entry
		recorded int
		complete bool
	}{
		{"before the fault", upTo(goodRollout(t), 10*s), 0, true},
		{"one of two replaced (old-b still ready)", upTo(goodRollout(t), 60*s), 1, false},
		{"both replaced", upTo(goodRollout(t), 66*s), 1, true},
		{"new pod never ready", upTo(stuckRollout(t), 80*s), 1, false},
		{"a pod deletion is no rollout", oneShot(t).Entries(), 0, true},
	} {
		n, ok := verdict.RolloutsComplete(c.entries, 7*s)
		if n != c.recorded || ok != c.complete {
			t.Errorf("%s: %d recorded, complete %v; want %d, %v", c.name, n, ok, c.recorded, c.complete)
		}
	}
}

// RolloutBound is the bound recovery-within states for the good target (2 × 66.7s), and with no
// startup probe the live pod's boot stands in (× 1.5 + 2s), or there is none.
func TestRolloutBound(t *testing.T) {
	o := good(t)
	if b, ok := verdict.RolloutBound(o, 2, 0); !ok || b != ms(133400) {
		t.Errorf("good target: %s %v, want 2m13.4s", b, ok)
	}
	o.Startup = oracle.StartupBudget{Unbounded: true}
	if b, ok := verdict.RolloutBound(o, 2, 0); ok {
		t.Errorf("no startup probe, no boot: bound %s, want none", b)
	}
	if b, ok := verdict.RolloutBound(o, 2, 10*s); !ok || b != 2*(17*s+ms(4700)) {
		t.Errorf("no startup probe, boot 10s: %s %v, want 43.4s", b, ok)
	}
}
