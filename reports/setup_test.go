package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// setupTimeline is a scenario's timeline up to its load as the runner and the observers write it:
// the namespace at 14:00:42.3, two pods created at :43 and :44 by the API's clock and Ready at :52
// and :57, the observers' first sync listing them at :58.1, the load at :58.7.
func setupTimeline(t *testing.T) *timeline.Timeline {
	t.Helper()
	base := time.Date(2026, 12, 3, 14, 0, 42, 0, time.UTC)
	at := func(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }
	api := func(s int) *time.Time { v := base.Add(time.Duration(s) * time.Second); return &v }
	tl := timeline.New(at(0))
	mark := func(s float64, name string) {
		tl.Append(timeline.Entry{At: at(s), Kind: timeline.KindMark, Mark: &timeline.Mark{Name: name}})
	}
	pod := func(s float64, name, field, to string, apiSec int) {
		tl.Append(timeline.Entry{At: at(s), Kind: timeline.KindPod, Pod: name, APITime: api(apiSec),
			PodChange: &timeline.PodTransition{Field: field, To: to}})
	}
	mark(0.1, "start")
	mark(0.3, MarkDeploy)
	for _, p := range []struct {
		name           string
		created, ready int
	}{{"web-a", 1, 10}, {"web-b", 2, 15}} {
		pod(16.1, p.name, "created", "Running", p.created)
		pod(16.1, p.name, "condition/Ready", "True", p.ready)
	}
	mark(16.2, "observers-synced")
	mark(16.7, MarkLoadStart)
	// A pod the scenario's fault replaced after the load started is not part of the setup.
	pod(30, "web-c", "created", "Pending", 30)
	pod(35, "web-c", "condition/Ready", "True", 35)
	return tl
}

func TestSetupOfSplitsRolloutFromOverhead(t *testing.T) {
	s, err := SetupOf(setupTimeline(t).Entries())
	if err != nil {
		t.Fatal(err)
	}
	want := Setup{Total: 16400 * time.Millisecond, Rollout: 14 * time.Second, Overhead: 2400 * time.Millisecond,
		Before: 700 * time.Millisecond, After: 1700 * time.Millisecond, Pods: 2}
	if s != want {
		t.Fatalf("SetupOf = %+v\nwant       %+v", s, want)
	}
	if got := s.String(); !strings.Contains(got, "rollout 14s (2 pods) + overhead 2.4s") {
		t.Errorf("String() = %q", got)
	}
}

func TestSetupOfNeedsTheMarksAndThePods(t *testing.T) {
	var noLoad, noPods []timeline.Entry
	for _, e := range setupTimeline(t).Entries() {
		if e.Kind != timeline.KindMark || e.Mark.Name != MarkLoadStart {
			noLoad = append(noLoad, e)
		}
		if e.Kind != timeline.KindPod {
			noPods = append(noPods, e)
		}
	}
	if _, err := SetupOf(noLoad); err == nil || !strings.Contains(err.Error(), "never started its load") {
		t.Errorf("without the load's mark: %v", err)
	}
	if _, err := SetupOf(noPods); err == nil || !strings.Contains(err.Error(), "no target pod") {
		t.Errorf("without pods: %v", err)
	}
}

// TestSetupOfLeavesTheCapacitySearchOut: an overload sized by capacity searches it between its
// observers and its load; that is the scenario measuring the target, not setup, and the readiness
// changes it causes are not the rollout. A pod whose
// creationTimestamp, truncated to the second, precedes the namespace counts from the namespace.
func TestSetupOfLeavesTheCapacitySearchOut(t *testing.T) {
	base := time.Date(2026, 12, 3, 14, 0, 42, 0, time.UTC)
	at := func(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }
	created, ready := base, base.Add(13*time.Second)
	tl := timeline.New(base)
	for _, m := range []struct {
		s    float64
		name string
	}{{0.4, MarkDeploy}, {16.2, MarkObserversSynced}, {16.5, MarkCapacitySearch}, {30.5, MarkCapacity}, {31, MarkLoadStart}} {
		tl.Append(timeline.Entry{At: at(m.s), Kind: timeline.KindMark, Mark: &timeline.Mark{Name: m.name}})
	}
	tl.Append(timeline.Entry{At: at(16), Kind: timeline.KindPod, Pod: "web-a", APITime: &created,
		PodChange: &timeline.PodTransition{Field: "created", To: "Running"}})
	tl.Append(timeline.Entry{At: at(16), Kind: timeline.KindPod, Pod: "web-a", APITime: &ready,
		PodChange: &timeline.PodTransition{Field: "condition/Ready", To: "True"}})
	// The search's overload withdrew the pod; it was Ready again before the load: not the rollout.
	again := base.Add(29 * time.Second)
	tl.Append(timeline.Entry{At: at(29.2), Kind: timeline.KindPod, Pod: "web-a", APITime: &again,
		PodChange: &timeline.PodTransition{Field: "condition/Ready", From: "False", To: "True"}})
	s, err := SetupOf(tl.Entries())
	if err != nil {
		t.Fatal(err)
	}
	want := Setup{Total: 30600 * time.Millisecond, Rollout: 12600 * time.Millisecond, Sizing: 14 * time.Second,
		Overhead: 4 * time.Second, After: 4 * time.Second, Pods: 1}
	if s != want {
		t.Fatalf("SetupOf = %+v\nwant       %+v", s, want)
	}
	if got := s.String(); !strings.Contains(got, "+ capacity search 14s + overhead 4s (before the first pod 0s, after the last Ready 4s)") {
		t.Errorf("String() = %q", got)
	}
}
