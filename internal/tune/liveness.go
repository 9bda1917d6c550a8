package tune

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/timeline"
)

// propagations measures kubelet → EndpointSlice propagation: from the pod watch seeing the
// container's ready turn false to the pod's endpoint going ready=false (within 10 s).
func propagations(s *scenarioRun) []Evidence {
	field := "container/" + s.settings.Container + "/ready"
	hist := timeline.Endpoints(s.entries)
	var out []Evidence
	for _, e := range s.entries {
		if e.Kind != timeline.KindPod || e.PodChange == nil || e.PodChange.Field != field ||
			e.PodChange.From != "true" || e.PodChange.To != "false" {
			continue
		}
		for _, st := range hist.ByPod[e.Pod] {
			if st.T < e.T || st.T > e.T+10*time.Second {
				continue
			}
			if !st.Present || !st.Ready {
				out = append(out, s.evidence(e.Pod, e.T, st.T, e.Seq, "container not ready at %s (seq %d) → endpoint not ready at %s (seq %d): %s",
					at(e.T), e.Seq, at(st.T), st.Seq, secs(st.T-e.T)))
				break
			}
		}
	}
	return out
}

// recommendLiveness: liveness never fires before readiness has withdrawn the pod:
// (F_l − 1) × P_l ≥ F_r × P_r + timeout_r + readiness lag + propagation (measured when the runs
// show one, else the oracle's). Liveness restarts during a dependency fault are reported as a
// handler problem no number fixes.
func recommendLiveness(g *group) []Recommendation {
	st := g.settings
	var out []Recommendation
	if deep := dependencyRestarts(g); len(deep) > 0 {
		out = append(out, Recommendation{Field: "livenessProbe (handler)", Status: CannotTune, Current: st.Oracle.Liveness.Probe.Handler,
			Why:      fmt.Sprintf("liveness restarted the container %d times while a dependency fault was active: the liveness handler checks a dependency, so a restart cannot help and no threshold fixes it; make liveness shallow (process health only)", len(deep)),
			Evidence: deep})
	}
	if st.Oracle.Liveness == nil || st.Oracle.Readiness == nil {
		return append(out, Recommendation{Field: "livenessProbe.failureThreshold", Status: LeftAlone, Current: "n/a",
			Why: "the container lacks a liveness or a readiness probe: there is no ordering to keep"})
	}
	lv, rd := st.Oracle.Liveness.Probe, st.Oracle.Readiness.Probe
	lag := st.Oracle.Readiness.Detection.AppLag
	prop, propWords := st.Oracle.Propagation, fmt.Sprintf("propagation %s (the oracle's allowance: none measured)", secs(st.Oracle.Propagation))
	var props []Evidence
	for _, s := range g.scenarios {
		props = append(props, propagations(s)...)
	}
	if len(props) > 0 {
		w := longest(props)
		prop = w.Value
		propWords = fmt.Sprintf("longest measured propagation %s (of %d)", secs(prop), len(props))
		props = dedupe(append([]Evidence{w}, props...))
	}
	withdrawn := time.Duration(rd.FailureThreshold)*rd.Period + rd.Timeout + lag + prop
	earliest := time.Duration(lv.FailureThreshold-1) * lv.Period
	rec := Recommendation{Field: "livenessProbe.failureThreshold", Current: fmt.Sprintf("%d (× periodSeconds %d: earliest kill %s after a fault)", lv.FailureThreshold, int64(lv.Period/time.Second), secs(earliest)),
		Evidence: props}
	lagWords := ""
	if lag > 0 {
		lagWords = fmt.Sprintf(" + readiness lag %s", secs(lag))
	}
	rhs := fmt.Sprintf("readiness F × P + timeout = %d × %s + %s%s + %s = %s", rd.FailureThreshold, rd.Period, rd.Timeout, lagWords, propWords, secs(withdrawn))
	if earliest >= withdrawn {
		rec.Status, rec.Recommended = Keep, fmt.Sprint(lv.FailureThreshold)
		rec.Formula = fmt.Sprintf("(F_l − 1) × P_l = %d × %s = %s ≥ %s", lv.FailureThreshold-1, lv.Period, secs(earliest), rhs)
		rec.Why = "liveness cannot fire before readiness has withdrawn the pod"
		return append(out, rec)
	}
	f := lv.FailureThreshold
	for time.Duration(f-1)*lv.Period < withdrawn {
		f++
	}
	rec.Status, rec.Recommended = Change, fmt.Sprint(f)
	rec.Formula = fmt.Sprintf("(F_l − 1) × P_l ≥ %s → F_l = %d at P_l %s", rhs, f, lv.Period)
	rec.Why = "liveness is shorter-fused than readiness: a stalled pod can be killed while it still receives traffic"
	rec.patch = &fieldPatch{container: true, path: []string{"livenessProbe", "failureThreshold"}, value: f}
	return append(out, rec)
}

// dependencyRestarts are liveness restarts of the container while a fault on a dependency (one
// that needs toxiproxy in front of it) was active or within a minute of its revert.
func dependencyRestarts(g *group) []Evidence {
	var out []Evidence
	for _, s := range g.scenarios {
		var deps []timeline.FaultWindow
		for _, w := range timeline.FaultWindows(s.entries) {
			if !w.Skipped && onDependency(w.Type) {
				deps = append(deps, w)
			}
		}
		for _, e := range s.entries {
			if e.Kind != timeline.KindRestart || e.Restart == nil || e.Restart.Cause != timeline.CauseLiveness ||
				e.Restart.Container != s.settings.Container {
				continue
			}
			for _, w := range deps {
				end := w.End
				if !w.Reverted {
					end = max(end, s.loadEnd)
				}
				if e.T >= w.Start && e.T <= end+time.Minute {
					out = append(out, s.evidence(e.Pod, w.Start, e.T, e.Seq, "liveness restart at %s (seq %d) during %s (from %s): %s",
						at(e.T), e.Seq, w.Type, at(w.Start), strings.TrimSpace(e.Restart.Evidence)))
					break
				}
			}
		}
	}
	return out
}

// onDependency reports whether faults of type typ act on a dependency: they need a toxiproxy in
// front of it (the fault registry says so).
func onDependency(typ string) bool {
	d, ok := faults.Lookup(typ)
	return ok && slices.ContainsFunc(d.Needs, func(c faults.Capability) bool { return c.Name == faults.NeedsToxiproxy.Name })
}
