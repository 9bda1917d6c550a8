package verdict_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// Issue 12, problem 1: readiness-withdrawn-in-window accepted any ready→not-ready transition and
// never checked that the pod stayed withdrawn. Each run below used to PASS.
func TestWithdrawalMeansReadiness(t *testing.T) {
	dbSlow := func() *vt.Builder { return base().Inject(10*s, "db-latency", "a").Revert(30*s, "db-latency", "a") }
	cases := []struct {
		name     string
		run      *vt.Builder
		want     verdict.Status
		evidence string
	}{
		{name: "withdrawn and held", run: dbSlow().NotReady(13*s, "a").Ready(31*s, "a"),
			want: verdict.Pass, evidence: "(in window)"},
		{name: "crashed instead", run: dbSlow().Exited(ms(12900), "a", 2).NotReady(13*s, "a"),
			want: verdict.Fail, evidence: "not by readiness: its container"},
		{name: "flapped back mid-fault", run: dbSlow().NotReady(13*s, "a").Ready(20*s, "a"),
			want: verdict.Fail, evidence: "FLAPPING"},
		{name: "restarted by liveness, then back: not flapping", run: dbSlow().NotReady(13*s, "a").Restart(18*s, "a", timeline.CauseLiveness).Ready(20*s, "a"),
			want: verdict.Pass, evidence: "(in window)"},
		{name: "deleted instead", run: dbSlow().Deleting(12*s, "a", 30*s).Terminating(13*s, "a"),
			want: verdict.Fail, evidence: "not by readiness"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := verdict.Evaluate(c.run.Input(), verdict.Spec{Rule: "readiness-withdrawn-in-window", Params: map[string]string{"fault": "db-latency"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s", res.Status, c.want, res.Observed)
			}
			var notes []string
			for _, e := range res.Evidence {
				notes = append(notes, e.Note)
			}
			if !strings.Contains(strings.Join(notes, "\n"), c.evidence) {
				t.Errorf("evidence %q lacks %q", notes, c.evidence)
			}
		})
	}
	// hold=false accepts a pod that sheds load and comes back (overload's oscillation).
	r := dbSlow().NotReady(13*s, "a").Ready(20*s, "a")
	res, _ := verdict.Evaluate(r.Input(), verdict.Spec{Rule: "readiness-withdrawn-in-window", Params: map[string]string{"fault": "db-latency", "hold": "false"}})
	if res.Status != verdict.Pass {
		t.Errorf("hold=false: %s %s", res.Status, res.Observed)
	}
}

// Issue 12, problem 2: no-liveness-restarts passed app crashes, OOM kills and startup kills; the
// default rule no-unexpected-restarts fails every restart the scenario's faults do not explain.
func TestNoUnexpectedRestarts(t *testing.T) {
	cases := []struct {
		name string
		run  *vt.Builder
		want verdict.Status
	}{
		{"crash during db slowness", base().Inject(10*s, "db-latency", "").Restart(15*s, "a", timeline.CauseAppExit), verdict.Fail},
		{"oom", base().Restart(15*s, "b", timeline.CauseOOM), verdict.Fail},
		{"startup kill", base().Restart(15*s, "b", timeline.CauseStartup), verdict.Fail},
		{"liveness kill of the frozen pod", base().Inject(10*s, "freeze", "a").Restart(25*s, "a", timeline.CauseLiveness), verdict.Pass},
		{"liveness kill of a bystander", base().Inject(10*s, "freeze", "a").Restart(25*s, "b", timeline.CauseLiveness), verdict.Fail},
		{"liveness kill before the freeze", base().Restart(5*s, "a", timeline.CauseLiveness).Inject(10*s, "freeze", "a"), verdict.Fail},
		{"deletion by pod-delete", base().Inject(10*s, "pod-delete", "a").Restart(12*s, "a", timeline.CauseDeletion), verdict.Pass},
		{"deletion with the fault skipped", base().Skip(10*s, "pod-delete", "no pod").Restart(12*s, "a", timeline.CauseDeletion), verdict.Fail},
		{"no restarts", base(), verdict.Pass},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := verdict.Evaluate(c.run.Input(), verdict.Spec{Rule: "no-unexpected-restarts"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s", res.Status, c.want, res.Observed)
			}
		})
	}
	// Every scenario is judged by it, listed or not.
	if !slices.Contains(verdict.Defaults(), "no-unexpected-restarts") {
		t.Errorf("defaults = %v", verdict.Defaults())
	}
}

// Issue 12, problem 4: terminating-before-exit was satisfied by Kubernetes itself (the endpoint goes
// terminating milliseconds after the deletion): a target exiting at once on SIGTERM passed.
func TestTerminatingBeforeExitNeedsALead(t *testing.T) {
	exitsAtOnce := base().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 30*s).Terminating(ms(10030), "a").Exited(ms(10150), "a", 0)
	waits := base().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 30*s).Terminating(ms(10030), "a").Killing(ms(10100), "a").
		Removed(ms(15990), "a").ExitedReported(ms(16100), 16*s, "a", 0)
	// The kubelet reports an exit seconds late (seen on the cluster: a no-drain pod's exit observed
	// 2.96 s after its withdrawal); the status's finishedAt says when it really was.
	reportedLate := base().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 30*s).Terminating(ms(10030), "a").
		ExitedReported(ms(12990), ms(10300), "a", 0)
	// A busy kubelet sends SIGTERM 2.5 s after the withdrawal (seen on the cluster: a no-drain pod
	// withdrawn 2.09 s before its exit): the app's lead is counted from the kill, not the withdrawal.
	killedLate := base().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 30*s).Terminating(ms(10030), "a").
		Entry(timeline.Entry{T: ms(12500), Kind: timeline.KindEvent, Pod: "a", Event: &timeline.Event{Reason: "Killing", Message: "Stopping container target"}}).
		Exited(ms(12700), "a", 0)
	waitsAfterKill := base().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 30*s).Terminating(ms(10030), "a").
		Entry(timeline.Entry{T: ms(10100), Kind: timeline.KindEvent, Pod: "a", Event: &timeline.Event{Reason: "Killing", Message: "Stopping container target"}}).
		Removed(ms(15990), "a").ExitedReported(ms(16100), 16*s, "a", 0)
	for _, c := range []struct {
		name string
		run  *vt.Builder
		want verdict.Status
	}{{"exits at once on SIGTERM", exitsAtOnce, verdict.Fail}, {"waits for routing to stop", waits, verdict.Pass},
		{"exits at once, seen late", reportedLate, verdict.Fail}, {"exits at once on a late SIGTERM", killedLate, verdict.Fail},
		{"waits after the kill", waitsAfterKill, verdict.Pass}} {
		res, err := verdict.Evaluate(c.run.Input(), verdict.Spec{Rule: "terminating-before-exit"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != c.want {
			t.Errorf("%s: %s, want %s: %s", c.name, res.Status, c.want, res.Observed)
		}
	}
}

// TestWithdrawalMeasureIsTheOneJudged: with min-withdrawn 1, the measure is the quickest
// withdrawal (the one the PASS rests on), not a pod beyond it that left late (overload's keeper
// withdrew 9.5 s in, and compare flagged a PASS whose measure exceeded its bound); with every pod
// required, it is the slowest.
func TestWithdrawalMeasureIsTheOneJudged(t *testing.T) {
	run := base().Inject(10*s, "db-latency", "").Revert(30*s, "db-latency", "").
		NotReady(12*s, "b").NotReady(13*s, "c").NotReady(ms(19500), "a")
	for _, c := range []struct {
		params map[string]string
		want   float64
	}{
		{map[string]string{"fault": "db-latency", "hold": "false", "min-withdrawn": "1"}, 2},
		{map[string]string{"fault": "db-latency", "hold": "false", "min-withdrawn": "2"}, 3},
		{map[string]string{"fault": "db-latency", "hold": "false"}, 9.5},
	} {
		res, err := verdict.Evaluate(run.Input(), verdict.Spec{Rule: "readiness-withdrawn-in-window", Params: c.params})
		if err != nil {
			t.Fatal(err)
		}
		if res.Measure == nil || res.Measure.Value != c.want {
			t.Errorf("%v: measure %+v, want %gs (%s %s)", c.params, res.Measure, c.want, res.Status, res.Observed)
		}
	}
}
