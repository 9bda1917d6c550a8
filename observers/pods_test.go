package observers

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate/internal/timeline"
)

func updatePod(t *testing.T, r *rig, p *corev1.Pod) {
	t.Helper()
	if _, err := r.client.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createEvent(t *testing.T, r *rig, name, podName, container, reason, msg string, count int32) *corev1.Event {
	t.Helper()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: podName, FieldPath: "spec.containers{" + container + "}"},
		Reason:         reason, Message: msg, Count: count, Type: corev1.EventTypeWarning,
		FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(),
	}
	out, err := r.client.CoreV1().Events(ns).Create(context.Background(), ev, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func entriesWhen(r *rig, what string, cond func(lines []string) bool, ks ...timeline.Kind) []string {
	es := r.waitFor(what, func(es []timeline.Entry) bool { return cond(kinds(es, ks...)) })
	return kinds(es, ks...)
}

func TestPodInitialStateAndTransitions(t *testing.T) {
	r := newRig(t, Options{}, pod("p1"))
	initial := entriesWhen(r, "initial pod state", func(l []string) bool { return len(l) >= 6 }, timeline.KindPod)
	equalLines(t, initial, []string{
		"pod p1 created ->Running",
		"pod p1 phase ->Running",
		"pod p1 condition/Ready ->True",
		"pod p1 container/app/started ->true",
		"pod p1 container/app/ready ->true",
		"pod p1 container/app/state ->running",
	})
	// The initial list is state, not recovered.
	for _, e := range r.tl.Filter(timeline.KindPod) {
		if e.Recovered {
			t.Fatalf("initial entry marked recovered: %s", describe(e))
		}
	}
	p := pod("p1")
	p.Status.Conditions[0].Status = corev1.ConditionFalse
	p.Status.Conditions[0].Reason = "ContainersNotReady"
	p.Status.ContainerStatuses[0].Ready = false
	updatePod(t, r, p)
	got := entriesWhen(r, "not ready", func(l []string) bool { return len(l) >= 8 }, timeline.KindPod)
	equalLines(t, got[6:], []string{
		"pod p1 condition/Ready True->False",
		"pod p1 container/app/ready true->false",
	})
	e := r.tl.Filter(timeline.KindPod)[6]
	if e.PodChange.Detail != "ContainersNotReady" {
		t.Fatalf("condition detail = %q", e.PodChange.Detail)
	}
}

func TestRestartWithLivenessKillEventBeforeStatus(t *testing.T) {
	r := newRig(t, Options{}, pod("p1"))
	entriesWhen(r, "initial", func(l []string) bool { return len(l) >= 6 }, timeline.KindPod)
	createEvent(t, r, "p1.unhealthy", "p1", "app", "Unhealthy", "Liveness probe failed: Get \"http://10.0.0.1:8080/livez\": context deadline exceeded", 2)
	createEvent(t, r, "p1.killing", "p1", "app", "Killing", "Container app failed liveness probe, will be restarted", 1)
	entriesWhen(r, "events", func(l []string) bool { return len(l) >= 2 }, timeline.KindProbe, timeline.KindEvent)

	p := pod("p1")
	finished := metav1.NewTime(time.Now().Add(-time.Second))
	p.Status.ContainerStatuses[0].RestartCount = 1
	p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", ExitCode: 0, FinishedAt: finished}}
	updatePod(t, r, p)
	got := entriesWhen(r, "restart", func(l []string) bool { return len(l) >= 3 }, timeline.KindProbe, timeline.KindEvent, timeline.KindRestart)
	equalLines(t, got, []string{
		"probe p1 liveness app x2",
		"event Killing Pod/p1 x1",
		"restart p1 app #1 liveness",
	})
	rs := r.tl.Filter(timeline.KindRestart)[0]
	if rs.Restart.Reason != "Completed" || rs.Restart.FinishedAt == nil || !rs.Restart.FinishedAt.Equal(finished.Time) || rs.APITime == nil {
		t.Fatalf("restart facts wrong: %+v", rs.Restart)
	}
}

func TestRestartEventAfterStatusIsCorrectedByAttributeRestarts(t *testing.T) {
	r := newRig(t, Options{}, pod("p1"))
	entriesWhen(r, "initial", func(l []string) bool { return len(l) >= 6 }, timeline.KindPod)
	p := pod("p1")
	p.Status.ContainerStatuses[0].RestartCount = 1
	p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137, FinishedAt: metav1.Now()}}
	updatePod(t, r, p)
	entriesWhen(r, "restart", func(l []string) bool { return len(l) >= 1 }, timeline.KindRestart)
	// The Killing event arrives after the status (its own time a second before the termination).
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "p1.killing", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "p1", FieldPath: "spec.containers{app}"},
		Reason:         "Killing", Message: "Container app failed liveness probe, will be restarted", Count: 1,
		LastTimestamp: metav1.NewTime(time.Now().Add(-time.Second)),
	}
	if _, err := r.client.CoreV1().Events(ns).Create(context.Background(), ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	live := entriesWhen(r, "late event", func(l []string) bool { return len(l) >= 2 }, timeline.KindRestart, timeline.KindEvent)
	equalLines(t, live, []string{"restart p1 app #1 unknown", "event Killing Pod/p1 x1"})

	final := kinds(AttributeRestarts(r.tl.Entries()), timeline.KindRestart)
	equalLines(t, final, []string{"restart p1 app #1 liveness"})
	// The live timeline is untouched.
	if c := r.tl.Filter(timeline.KindRestart)[0].Restart.Cause; c != timeline.CauseUnknown {
		t.Fatalf("AttributeRestarts modified the timeline: %s", c)
	}
}

func TestRestartOOMAndAppExit(t *testing.T) {
	r := newRig(t, Options{}, pod("p1"))
	entriesWhen(r, "initial", func(l []string) bool { return len(l) >= 6 }, timeline.KindPod)
	p := pod("p1")
	p.Status.ContainerStatuses[0].RestartCount = 1
	p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, FinishedAt: metav1.Now()}}
	updatePod(t, r, p)
	entriesWhen(r, "oom", func(l []string) bool { return len(l) >= 1 }, timeline.KindRestart)
	p.Status.ContainerStatuses[0].RestartCount = 2
	p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 3, FinishedAt: metav1.Now()}}
	updatePod(t, r, p)
	got := entriesWhen(r, "app exit", func(l []string) bool { return len(l) >= 2 }, timeline.KindRestart)
	equalLines(t, got, []string{"restart p1 app #1 oom", "restart p1 app #2 app-exit"})
	if x := r.tl.Filter(timeline.KindRestart)[1].Restart; x.ExitCode != 3 {
		t.Fatalf("exit code = %d", x.ExitCode)
	}
}

func TestPodDeletionEndsContainersWithCauseDeletion(t *testing.T) {
	r := newRig(t, Options{}, pod("p1"))
	entriesWhen(r, "initial", func(l []string) bool { return len(l) >= 6 }, timeline.KindPod)
	p := pod("p1")
	now := metav1.Now()
	p.DeletionTimestamp = &metav1.Time{Time: now.Add(30 * time.Second)}
	p.DeletionGracePeriodSeconds = ptr(int64(30))
	updatePod(t, r, p)
	p.Status.ContainerStatuses[0].Ready = false
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", ExitCode: 0, FinishedAt: now}}
	updatePod(t, r, p)
	if err := r.client.CoreV1().Pods(ns).Delete(context.Background(), "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got := entriesWhen(r, "deleted", func(l []string) bool { return hasLine(l, "pod p1 deleted Running->") }, timeline.KindPod, timeline.KindRestart)
	equalLines(t, got[6:], []string{
		"pod p1 deleting ->true",
		"pod p1 container/app/ready true->false",
		"pod p1 container/app/state running->terminated:Completed:0",
		"restart p1 app #0 deletion",
		"pod p1 deleted Running->",
	})
	d := r.tl.Filter(timeline.KindPod)[6]
	if d.PodChange.GracePeriodSeconds == nil || *d.PodChange.GracePeriodSeconds != 30 {
		t.Fatalf("grace period not recorded: %+v", d.PodChange)
	}
	if d.APITime == nil || d.APITime.Sub(now.Time).Abs() > time.Second {
		t.Fatalf("deleting APITime = %v, want the request time ~%v (deadline minus grace)", d.APITime, now.Time)
	}
}

func TestEvictedPodEndsWithCauseEviction(t *testing.T) {
	r := newRig(t, Options{}, pod("p1"))
	entriesWhen(r, "initial", func(l []string) bool { return len(l) >= 6 }, timeline.KindPod)
	p := pod("p1")
	p.Status.Phase = corev1.PodFailed
	p.Status.Reason = "Evicted"
	p.Status.ContainerStatuses[0].Ready = false
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137, FinishedAt: metav1.Now()}}
	updatePod(t, r, p)
	got := entriesWhen(r, "evicted", func(l []string) bool { return len(l) >= 1 }, timeline.KindRestart)
	equalLines(t, got, []string{"restart p1 app #0 eviction"})
}

func TestEventsBecomeProbeFailuresAndEvents(t *testing.T) {
	r := newRig(t, Options{})
	createEvent(t, r, "a", "p1", "app", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", 1)
	ev := createEvent(t, r, "b", "p1", "app", "Unhealthy", "Startup probe failed: connection refused", 1)
	createEvent(t, r, "c", "p1", "app", "BackOff", "Back-off restarting failed container app", 1)
	entriesWhen(r, "3 events", func(l []string) bool { return len(l) >= 3 }, timeline.KindProbe, timeline.KindEvent)
	// An aggregated repeat is a new occurrence; a no-op update is not.
	ev.Count = 4
	ev.LastTimestamp = metav1.NewTime(time.Now().Add(time.Second))
	if _, err := r.client.CoreV1().Events(ns).Update(context.Background(), ev, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev.Labels = map[string]string{"x": "y"}
	if _, err := r.client.CoreV1().Events(ns).Update(context.Background(), ev, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	createEvent(t, r, "d", "p1", "app", "Pulled", "Container image already present", 1)
	got := entriesWhen(r, "5 events", func(l []string) bool { return len(l) >= 5 }, timeline.KindProbe, timeline.KindEvent)
	time.Sleep(50 * time.Millisecond)
	equalLines(t, kinds(r.tl.Entries(), timeline.KindProbe, timeline.KindEvent), []string{
		"probe p1 readiness app x1",
		"probe p1 startup app x1",
		"event BackOff Pod/p1 x1",
		"probe p1 startup app x4",
		"event Pulled Pod/p1 x1",
	})
	_ = got
	pr := r.tl.Filter(timeline.KindProbe)[0]
	if pr.APITime == nil || pr.Probe.Message == "" {
		t.Fatalf("probe entry lacks API time or message: %+v", pr)
	}
}

func TestEventsFromBeforeTheRunAreSkipped(t *testing.T) {
	old := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p0"}, Reason: "Killing", Message: "Stopping container app", Count: 1}
	r := newRig(t, Options{}, old)
	createEvent(t, r, "new", "p1", "app", "Scheduled", "Successfully assigned", 1)
	got := entriesWhen(r, "event", func(l []string) bool { return len(l) >= 1 }, timeline.KindEvent)
	equalLines(t, got, []string{"event Scheduled Pod/p1 x1"})
}
