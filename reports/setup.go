package reports

import (
	"errors"
	"fmt"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// The runner's phase marks that bound a scenario's setup: the namespace has just been created when
// MarkDeploy is appended, the observers' first sync (the target's pods as its rollout left them)
// is on the timeline at MarkObserversSynced, and the load starts at MarkLoadStart. An overload sized
// by the target's capacity searches it between MarkCapacitySearch and MarkCapacity.
const (
	MarkDeploy          = "deploy"
	MarkObserversSynced = "observers-synced"
	MarkLoadStart       = "schedule-start"
	MarkCapacitySearch  = "capacity-search"
	MarkCapacity        = "capacity"
	MarkCapacityCap     = "capacity-cap" // between the two: the target's CPU capped for a second search
)

// Setup splits the stretch from a scenario's namespace to its load (FIGURE setup-overhead) into the
// target's own rollout, the scenario's capacity search (an overload sized by capacity: a
// measurement of the target, not setup) and what the harness added around them. The rollout is
// read from the pods' API times (creationTimestamp, the Ready condition's lastTransitionTime),
// which are truncated to the second: Rollout, and so Overhead, are within a second either way.
type Setup struct {
	Total    time.Duration // namespace created (MarkDeploy) → load started (MarkLoadStart)
	Rollout  time.Duration // the first target pod created (not before the namespace) → the last one Ready
	Sizing   time.Duration // MarkCapacitySearch → MarkCapacity; 0 without a capacity search
	Overhead time.Duration // Total − Rollout − Sizing: what the harness added (at least 0)
	Before   time.Duration // namespace → the first target pod created: dependencies, applying the manifests
	After    time.Duration // the last target pod Ready → load, less Sizing: observers, node access, planning
	Pods     int           // target pods in the rollout
}

// String is one line of the split.
func (s Setup) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	sizing := ""
	if s.Sizing > 0 {
		sizing = fmt.Sprintf(" + capacity search %s", r(s.Sizing))
	}
	return fmt.Sprintf("namespace → load %s = rollout %s (%d pods)%s + overhead %s (before the first pod %s, after the last Ready %s)",
		r(s.Total), r(s.Rollout), s.Pods, sizing, r(s.Overhead), r(s.Before), r(s.After))
}

// SetupOf measures Setup from a scenario's timeline: its marks, and the pod entries of the
// observers' first sync (up to MarkObserversSynced, else the load), which list the target's pods with
// their API times; later Ready changes (a capacity search overloading the target) are not the
// rollout. It fails when a mark or the pods' API times are missing (an older timeline, or a scenario
// that never reached its load).
func SetupOf(entries []timeline.Entry) (Setup, error) {
	var ns, synced, load, search, sized time.Time
	first := func(t *time.Time, at time.Time) {
		if t.IsZero() {
			*t = at
		}
	}
	for _, e := range entries {
		if e.Kind != timeline.KindMark || e.Mark == nil {
			continue
		}
		switch e.Mark.Name {
		case MarkDeploy:
			first(&ns, e.At)
		case MarkObserversSynced:
			first(&synced, e.At)
		case MarkLoadStart:
			first(&load, e.At)
		case MarkCapacitySearch:
			first(&search, e.At)
		case MarkCapacity:
			first(&sized, e.At)
		}
	}
	if ns.IsZero() || load.IsZero() {
		return Setup{}, fmt.Errorf("no %q and %q marks: the scenario never started its load", MarkDeploy, MarkLoadStart)
	}
	if synced.IsZero() || synced.After(load) {
		synced = load
	}
	var created, ready time.Time
	pods := map[string]bool{}
	for _, e := range entries {
		if e.Kind != timeline.KindPod || e.PodChange == nil || e.APITime == nil || e.At.After(synced) {
			continue
		}
		switch c := e.PodChange; {
		case c.Field == "created":
			pods[e.Pod] = true
			if created.IsZero() || e.APITime.Before(created) {
				created = *e.APITime
			}
		case c.Field == "condition/Ready" && c.To == "True":
			if e.APITime.After(ready) {
				ready = *e.APITime
			}
		}
	}
	if created.IsZero() || ready.IsZero() {
		return Setup{}, errors.New("no target pod created and Ready with API times before the load")
	}
	// A pod is not created before its namespace: an earlier API time is the truncation.
	created = latest(created, ns)
	s := Setup{Total: load.Sub(ns), Rollout: max(ready.Sub(created), 0), Pods: len(pods), Before: created.Sub(ns)}
	if !search.IsZero() && !sized.IsZero() && !sized.After(load) {
		s.Sizing = max(sized.Sub(search), 0)
	}
	s.After = max(load.Sub(ready)-s.Sizing, 0)
	s.Overhead = max(s.Total-s.Rollout-s.Sizing, 0)
	return s, nil
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
