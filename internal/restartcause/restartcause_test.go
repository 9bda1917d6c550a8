package restartcause

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/timeline"
)

var base = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// rec builds a timeline from entries given with offsets in seconds, the way the observers record
// them: Seq in order, T from the offset, At = base + T.
type rec struct{ entries []timeline.Entry }

func (r *rec) add(sec float64, e timeline.Entry) timeline.Entry {
	e.T = time.Duration(sec * float64(time.Second))
	e.At = base.Add(e.T)
	e.Seq = int64(len(r.entries) + 1)
	if e.Pod == "" && e.Kind != timeline.KindFault {
		e.Pod = "web-1"
	}
	r.entries = append(r.entries, e)
	return e
}

// sorted returns the entries in time order.
func (r *rec) sorted() []timeline.Entry {
	tl := timeline.New(base)
	for _, e := range r.entries {
		tl.Append(e)
	}
	out := tl.Entries()
	// Append renumbers Seq in append order, which is the order of r.entries: unchanged.
	return out
}

func apiAt(sec float64) *time.Time {
	t := base.Add(time.Duration(sec * float64(time.Second))).Truncate(time.Second)
	return &t
}

func restart(container string, count int32, reason string, exit int32, finishedSec float64) timeline.Entry {
	return timeline.Entry{Kind: timeline.KindRestart, Restart: &timeline.ContainerRestart{
		Container: container, RestartCount: count, Reason: reason, ExitCode: exit, FinishedAt: apiAt(finishedSec)}}
}

func event(reason, msg string, apiSec float64) timeline.Entry {
	return timeline.Entry{Kind: timeline.KindEvent, APITime: apiAt(apiSec),
		Event: &timeline.Event{Reason: reason, Type: "Normal", Object: "Pod/web-1", Message: msg, Count: 1}}
}

func probe(kind, container string, apiSec float64) timeline.Entry {
	return timeline.Entry{Kind: timeline.KindProbe, APITime: apiAt(apiSec),
		Probe: &timeline.ProbeFailure{Probe: kind, Container: container, Message: kind + " probe failed: timeout", Count: 1}}
}

func attribute(t *testing.T, r *rec, restartSeq int64) (timeline.RestartCause, string) {
	t.Helper()
	entries := r.sorted()
	for _, e := range entries {
		if e.Seq == restartSeq {
			return Attribute(e, entries)
		}
	}
	t.Fatalf("restart seq %d not on the timeline", restartSeq)
	return "", ""
}

// upTo keeps only the entries received at or before sec: what a live observer had at that moment.
func upTo(r *rec, sec float64) *rec {
	out := &rec{}
	for _, e := range r.entries {
		if e.T <= time.Duration(sec*float64(time.Second)) {
			out.entries = append(out.entries, e)
		}
	}
	return out
}

func check(t *testing.T, gotCause timeline.RestartCause, evidence string, want timeline.RestartCause, evidenceHas string) {
	t.Helper()
	if gotCause != want {
		t.Fatalf("cause = %q (%s), want %q", gotCause, evidence, want)
	}
	if !strings.Contains(evidence, evidenceHas) {
		t.Fatalf("evidence %q does not mention %q", evidence, evidenceHas)
	}
}

func TestOOMKilled(t *testing.T) {
	r := &rec{}
	// Even a liveness Killing event nearby does not override the kernel's verdict.
	r.add(9, event("Killing", "Container app failed liveness probe, will be restarted", 9))
	x := r.add(10, restart("app", 1, "OOMKilled", 137, 10))
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseOOM, "OOMKilled")
}

func TestLivenessKillEventBeforeStatus(t *testing.T) {
	r := &rec{}
	r.add(5, probe(timeline.ProbeLiveness, "app", 5))
	r.add(6, probe(timeline.ProbeLiveness, "app", 6))
	r.add(6.1, event("Killing", "Container app failed liveness probe, will be restarted", 6))
	x := r.add(12, restart("app", 1, "Completed", 0, 11))
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseLiveness, "failed liveness probe")
}

func TestLivenessKillEventAfterStatusIsCorrectedInTheFinalPass(t *testing.T) {
	r := &rec{}
	x := r.add(12, restart("app", 1, "Error", 2, 11))
	// The Killing event reaches the watch 1.5 s after the status (its own time is before finishedAt).
	r.add(13.5, event("Killing", "Container app failed liveness probe, will be restarted", 6))

	live, ev := attribute(t, upTo(r, 12), x.Seq)
	check(t, live, ev, timeline.CauseAppExit, "exit code 2")

	final, ev := attribute(t, r, x.Seq)
	check(t, final, ev, timeline.CauseLiveness, "Killing event")
}

func TestLivenessKillEventMissingFallsBackToProbeFailures(t *testing.T) {
	r := &rec{}
	r.add(5, probe(timeline.ProbeLiveness, "app", 5))
	r.add(6, probe(timeline.ProbeLiveness, "app", 6))
	x := r.add(12, restart("app", 1, "Error", 143, 11))
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseLiveness, "no Killing event; 2 liveness probe failure")
}

func TestSIGKILLWithNoEvidenceIsUnknown(t *testing.T) {
	r := &rec{}
	x := r.add(12, restart("app", 1, "Error", 137, 11))
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseUnknown, "SIGKILL")
}

func TestStartupKill(t *testing.T) {
	r := &rec{}
	for i := 1; i <= 3; i++ {
		r.add(float64(i), probe(timeline.ProbeStartup, "app", float64(i)))
	}
	r.add(3.2, event("Killing", "Container app failed startup probe, will be restarted", 3))
	x := r.add(4, restart("app", 1, "Error", 137, 4))
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseStartup, "failed startup probe")
}

func TestStartupKillEventMissing(t *testing.T) {
	r := &rec{}
	for i := 1; i <= 3; i++ {
		r.add(float64(i), probe(timeline.ProbeStartup, "app", float64(i)))
	}
	x := r.add(4, restart("app", 1, "Error", 137, 4))
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseStartup, "3 startup probe failure")
}

func TestAppExitWithCode(t *testing.T) {
	r := &rec{}
	// A liveness failure that was not what killed it: the app exited 3 on its own.
	r.add(5, probe(timeline.ProbeLiveness, "app", 5))
	x := r.add(6, restart("app", 1, "Error", 3, 6))
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseAppExit, "exit code 3")
	if !strings.Contains(ev, "probe failure event(s) seen") {
		t.Fatalf("evidence %q should mention the probe failures it discounted", ev)
	}
}

func TestEvictionByEvent(t *testing.T) {
	r := &rec{}
	r.add(1, event("Evicted", "The node was low on resource: memory.", 1))
	x := r.add(2, restart("app", 0, "Error", 137, 2))
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseEviction, "Evicted")
}

func TestEvictionByDisruptionTargetEventMissing(t *testing.T) {
	r := &rec{}
	r.add(1, timeline.Entry{Kind: timeline.KindPod, PodChange: &timeline.PodTransition{Field: "condition/DisruptionTarget", From: "", To: "True", Detail: "EvictionByEvictionAPI"}})
	r.add(1, timeline.Entry{Kind: timeline.KindPod, PodChange: &timeline.PodTransition{Field: "deleting", To: "true"}})
	x := r.add(3, restart("app", 0, "Completed", 0, 3))
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseEviction, "EvictionByEvictionAPI")
}

func TestDeletionWithHarnessFault(t *testing.T) {
	r := &rec{}
	r.add(0.5, timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: "pod-delete", Action: timeline.FaultInject, Target: "web-1"}})
	r.add(0.6, timeline.Entry{Kind: timeline.KindPod, PodChange: &timeline.PodTransition{Field: "deleting", To: "true"}})
	x := r.add(6, restart("app", 0, "Completed", 0, 6))
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseDeletion, "harness fault pod-delete")
}

func TestEvidenceIsSplitBetweenConsecutiveRestarts(t *testing.T) {
	r := &rec{}
	r.add(6, event("Killing", "Container app failed liveness probe, will be restarted", 6))
	first := r.add(12, restart("app", 1, "Completed", 0, 11))
	second := r.add(30, restart("app", 2, "Error", 1, 29))
	c, ev := attribute(t, r, first.Seq)
	check(t, c, ev, timeline.CauseLiveness, "Killing")
	c, ev = attribute(t, r, second.Seq)
	check(t, c, ev, timeline.CauseAppExit, "exit code 1")
}

func TestKillOfAnotherContainerOrLaterInstanceDoesNotCount(t *testing.T) {
	r := &rec{}
	r.add(6, event("Killing", "Container sidecar failed liveness probe, will be restarted", 6))
	// Received within LateSlack, but its API time is well after this termination: it is about the
	// next instance.
	r.add(14, event("Killing", "Container app failed liveness probe, will be restarted", 14))
	x := r.add(12, restart("app", 1, "Error", 1, 10))
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseAppExit, "exit code 1")
}

func TestOtherPodsEvidenceDoesNotCount(t *testing.T) {
	r := &rec{}
	r.add(6, timeline.Entry{Pod: "web-2", Kind: timeline.KindEvent, APITime: apiAt(6),
		Event: &timeline.Event{Reason: "Killing", Object: "Pod/web-2", Message: "Container app failed liveness probe, will be restarted"}})
	x := r.add(12, restart("app", 1, "Error", 137, 11))
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseUnknown, "SIGKILL")
}

func TestActiveFaultIsNamedButDoesNotDecide(t *testing.T) {
	r := &rec{}
	r.add(1, timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: "db-latency", Action: timeline.FaultInject, Target: "postgres"}})
	r.add(2, timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: "stall", Action: timeline.FaultInject, Target: "web-1"}})
	r.add(3, timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: "stall", Action: timeline.FaultRevert, Target: "web-1"}})
	x := r.add(12, restart("app", 1, "Error", 1, 11))
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseAppExit, "during harness fault db-latency")
	if strings.Contains(ev, "stall") {
		t.Fatalf("evidence %q names a fault reverted before the restart", ev)
	}
}

func TestPodGoneWithoutDeletingSeenIsDeletion(t *testing.T) {
	r := &rec{}
	r.add(2, timeline.Entry{Kind: timeline.KindPod, Recovered: true, PodChange: &timeline.PodTransition{Field: "deleted", From: "Running"}})
	x := r.add(2, timeline.Entry{Kind: timeline.KindRestart, Recovered: true, Restart: &timeline.ContainerRestart{Container: "app"}})
	c, ev := attribute(t, r, x.Seq)
	check(t, c, ev, timeline.CauseDeletion, "pod deletion")
}

// TestHarnessFaultsAttributeByTheirRegistration: an evict fault at the pod explains an eviction
// even when the API's evidence was missed; a pod-delete (registered for deletions only) does not.
func TestHarnessFaultsAttributeByTheirRegistration(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		want timeline.RestartCause
		ev   string
	}{
		{faults.TypeEvict, timeline.CauseEviction, "harness fault evict"},
		{faults.TypePodDelete, timeline.CauseAppExit, "during harness fault pod-delete"},
	} {
		r := &rec{}
		r.add(0.5, timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: tc.typ, Action: timeline.FaultInject, Target: "web-1"}})
		x := r.add(6, restart("app", 0, "Error", 1, 6))
		c, ev := attribute(t, r, x.Seq)
		check(t, c, ev, tc.want, tc.ev)
	}
}

// TestHarnessEvictionIsBoundedInTime (audit N9): an evict fault is one-shot and never reverted, so it
// stayed "open" for the rest of the run and labelled any later exit of its pod an eviction. It
// explains the pod's end only within the grace period its proof reported (+ LateSlack).
func TestHarnessEvictionIsBoundedInTime(t *testing.T) {
	for _, tc := range []struct {
		name string
		at   float64
		want timeline.RestartCause
		ev   string
	}{
		{"within the grace period", 6, timeline.CauseEviction, "harness fault evict"},
		{"long after the grace period", 60, timeline.CauseAppExit, "exited by itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &rec{}
			r.add(0.5, timeline.Entry{Kind: timeline.KindFault, Pod: "web-1", Fault: &timeline.FaultAction{Type: faults.TypeEvict, Action: timeline.FaultInject, Target: "web-1"}})
			r.add(0.6, timeline.Entry{Kind: timeline.KindFault, Pod: "web-1", Fault: &timeline.FaultAction{Type: faults.TypeEvict, Action: timeline.FaultObserve, Target: "web-1",
				Params: map[string]string{"grace_s": "10", timeline.ParamEffect: timeline.EffectConfirmed}}})
			x := r.add(tc.at, restart("app", 0, "Error", 1, tc.at))
			c, ev := attribute(t, r, x.Seq)
			check(t, c, ev, tc.want, tc.ev)
		})
	}
}
