package tune

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/timeline"
)

// bootstraps measures each observed container start of the workload's container: from the pod
// watch seeing the container go running (from waiting or terminated) to it seeing the container
// started (with a startup probe: its first success) or, without one, ready. Containers running
// when the observers synced are not counted: their start was not seen. A restart while booting is
// returned in killed: that bootstrap outlasted its budget and has no length.
func bootstraps(s *scenarioRun) (samples, killed []Evidence) {
	c := s.settings.Container
	endField, endWhat := "container/"+c+"/ready", "ready"
	if s.settings.Startup != nil || (!s.settings.startupKnown && s.settings.Oracle.Startup.Source == "startupProbe") {
		endField, endWhat = "container/"+c+"/started", "started (startup probe passed)"
	}
	type boot struct {
		t   time.Duration
		seq int64
	}
	open := map[string]*boot{}
	for _, e := range s.entries {
		switch {
		case e.Kind == timeline.KindPod && e.PodChange != nil:
			pc := e.PodChange
			switch pc.Field {
			case "container/" + c + "/state":
				if pc.To == "running" && pc.From != "" && pc.From != "running" {
					open[e.Pod] = &boot{e.T, e.Seq}
				} else if pc.To != "running" {
					delete(open, e.Pod)
				}
			case endField:
				if b := open[e.Pod]; b != nil && pc.To == "true" {
					samples = append(samples, s.evidence(e.Pod, b.t, e.T, e.Seq,
						"container %s running at %s (seq %d) → %s at %s (seq %d): bootstrap %s",
						c, at(b.t), b.seq, endWhat, at(e.T), e.Seq, secs(e.T-b.t)))
					delete(open, e.Pod)
				}
			case "deleting":
				delete(open, e.Pod)
			}
		case e.Kind == timeline.KindRestart && e.Restart != nil && e.Restart.Container == c:
			if b := open[e.Pod]; b != nil {
				killed = append(killed, s.evidence(e.Pod, b.t, e.T, e.Seq,
					"container %s running at %s was restarted (%s) at %s before it was %s: bootstrap longer than %s",
					c, at(b.t), e.Restart.Cause, at(e.T), endWhat, secs(e.T-b.t)))
				delete(open, e.Pod)
			}
		}
	}
	return samples, killed
}

// recommendStartup: startup budget (initialDelay + F × P) ≥ p99 bootstrap × margin. A container
// without a startup probe whose liveness F × P is below that gets one.
func recommendStartup(g *group, opts Options) []Recommendation {
	st := g.settings
	var samples, killed []Evidence
	for _, s := range g.scenarios {
		b, k := bootstraps(s)
		samples, killed = append(samples, b...), append(killed, k...)
	}
	budget := st.Oracle.Startup
	field := "startupProbe.failureThreshold"
	if budget.Source != "startupProbe" {
		field = "startupProbe"
	}
	rec := Recommendation{Field: field, Current: startupNow(g)}
	if len(samples) == 0 && len(killed) == 0 {
		rec.Status = LeftAlone
		rec.Why = "no container start was observed to completion under load in these runs"
		rec.Supply = "cold-start (or pod-delete-under-load / rolling-update-under-load: their replacement pods start under load); a start must complete to be measured"
		return []Recommendation{rec}
	}
	// A killed start is a floor: its bootstrap took longer than it was allowed to run. The budget
	// must cover the longer of the measured bootstraps and that floor, each with the margin.
	var need time.Duration
	var bases []string
	if len(samples) > 0 {
		p := p99(values(samples))
		need = time.Duration(float64(p) * opts.StartupMargin)
		rank := ""
		if len(samples) < 100 {
			rank = " (nearest rank: the longest)"
		}
		bases = append(bases, fmt.Sprintf("p99 of %d measured bootstraps%s %s × margin %.2g = %s", len(samples), rank, secs(p), opts.StartupMargin, secs(need)))
		rec.Evidence = append(rec.Evidence, longest(samples))
	}
	if len(killed) > 0 {
		floor := longest(killed)
		fneed := time.Duration(float64(floor.Value) * opts.StartupMargin)
		bases = append(bases, fmt.Sprintf("a floor: %d starts were killed before they completed, the longest after %s (its bootstrap is longer; by how much is not measured) × margin %.2g = %s",
			len(killed), secs(floor.Value), opts.StartupMargin, secs(fneed)))
		if fneed > need {
			rec.Evidence = append([]Evidence{floor}, rec.Evidence...)
			need = fneed
		}
	}
	rec.Evidence = dedupe(append(append(rec.Evidence, killed...), samples...))
	basis := strings.Join(bases, "; ")
	if len(killed) > 0 {
		basis = "max(" + basis + ") = " + secs(need)
		rec.Supply = "the killed starts set only a floor: tune --verify re-runs them with this budget, and a start that then completes is measured"
	}
	switch budget.Source {
	case "startupProbe":
		if budget.Budget >= need {
			rec.Status, rec.Recommended = Keep, rec.Current
			rec.Formula = fmt.Sprintf("budget %s ≥ %s", budgetWords(g), basis)
			rec.Why = "the startup budget covers the slowest measured bootstrap with margin"
			if len(killed) > 0 {
				rec.Why = "the startup budget covers the measured bootstraps and the killed starts' floor with margin"
			}
			return []Recommendation{rec}
		}
		rec.Status = Change
		if st.Startup == nil {
			rec.Recommended = fmt.Sprintf("failureThreshold × periodSeconds ≥ %s", secs(need))
			rec.Formula = fmt.Sprintf("initialDelay + F × P ≥ %s", basis)
			rec.Why = "the startup budget is shorter than the measured bootstrap with margin"
			rec.NotPatched = "the startup probe's periodSeconds is not in this report (it predates the recorded spec); re-run to record it"
			return []Recommendation{rec}
		}
		f := int32(wholeSeconds(need-st.Startup.InitialDelay) / max(int64(st.Startup.Period/time.Second), 1))
		for st.Startup.InitialDelay+time.Duration(f)*st.Startup.Period < need {
			f++
		}
		rec.Recommended = fmt.Sprint(f)
		rec.Formula = fmt.Sprintf("initialDelay %s + F × P %s ≥ %s → F = %d", st.Startup.InitialDelay, st.Startup.Period, basis, f)
		rec.Why = fmt.Sprintf("the startup budget %s is shorter than the measured bootstrap with margin", budgetWords(g))
		rec.patch = &fieldPatch{container: true, path: []string{"startupProbe", "failureThreshold"}, value: f}
		return []Recommendation{rec}
	case "livenessProbe":
		lv := st.Oracle.Liveness.Probe
		guard := time.Duration(lv.FailureThreshold) * lv.Period
		if guard >= need {
			rec.Status, rec.Recommended = Keep, "none needed"
			rec.Formula = fmt.Sprintf("liveness F × P = %d × %s = %s ≥ %s", lv.FailureThreshold, lv.Period, guard, basis)
			rec.Why = "liveness alone lets the slowest measured bootstrap finish"
			if len(killed) > 0 {
				rec.Why = "liveness alone covers the measured bootstraps and the killed starts' floor with margin"
			}
			return []Recommendation{rec}
		}
		f := int32(wholeSeconds(need) / max(int64(lv.Period/time.Second), 1))
		for time.Duration(f)*lv.Period < need {
			f++
		}
		rec.Status = Add
		rec.Recommended = fmt.Sprintf("startupProbe on the liveness handler, periodSeconds %d, failureThreshold %d", int64(lv.Period/time.Second), f)
		rec.Formula = fmt.Sprintf("F × P (P = liveness period %s) ≥ %s → F = %d; liveness alone allows %s without its initial delay", lv.Period, basis, f, guard)
		rec.Why = "bootstraps are slower than liveness allows without an initial delay: a startup probe gives bootstrap its own finite budget and keeps liveness short-fused afterwards"
		out := []Recommendation{rec}
		if st.container == nil || st.container.LivenessProbe == nil {
			out[0].NotPatched = "the liveness probe's handler is not in this report (it predates the recorded spec); re-run to record it"
			return out
		}
		probe := startupProbeFrom(*st.container.LivenessProbe, lv.Period, f)
		out[0].patch = &fieldPatch{container: true, path: []string{"startupProbe"}, value: probe}
		if lv.InitialDelay > 0 {
			out = append(out, Recommendation{Field: "livenessProbe.initialDelaySeconds", Status: Change,
				Current: fmt.Sprint(int64(lv.InitialDelay / time.Second)), Recommended: "0",
				Formula: "a startup probe holds liveness back until bootstrap ends (Kubernetes probe semantics)",
				Why:     "the initial delay only stood in for a startup probe; after bootstrap it delays nothing useful",
				patch:   &fieldPatch{container: true, path: []string{"livenessProbe", "initialDelaySeconds"}, value: 0}})
		}
		return out
	}
	rec.Status = LeftAlone
	rec.Why = "no startup or liveness probe: nothing kills a slow bootstrap, so there is no budget to size"
	return []Recommendation{rec}
}

// startupProbeFrom is a startup probe on liveness's handler with period p and threshold f.
func startupProbeFrom(live corev1.Probe, p time.Duration, f int32) map[string]any {
	out := map[string]any{
		"periodSeconds":    int64(p / time.Second),
		"failureThreshold": f,
	}
	if live.TimeoutSeconds > 0 {
		out["timeoutSeconds"] = live.TimeoutSeconds
	}
	h := live.ProbeHandler
	switch {
	case h.HTTPGet != nil:
		out["httpGet"] = h.HTTPGet
	case h.TCPSocket != nil:
		out["tcpSocket"] = h.TCPSocket
	case h.GRPC != nil:
		out["grpc"] = h.GRPC
	case h.Exec != nil:
		out["exec"] = h.Exec
	}
	return out
}

func startupNow(g *group) string {
	st := g.settings
	switch {
	case st.Startup != nil:
		return fmt.Sprintf("%d (× periodSeconds %d + initialDelay %d = %s)", st.Startup.FailureThreshold,
			int64(st.Startup.Period/time.Second), int64(st.Startup.InitialDelay/time.Second), secs(st.Oracle.Startup.Budget))
	case st.Oracle.Startup.Source == "startupProbe":
		return "budget " + secs(st.Oracle.Startup.Budget)
	}
	return "none (" + strings.TrimPrefix(st.Oracle.Startup.Explain, "startup: ") + ")"
}

func budgetWords(g *group) string {
	b := g.settings.Oracle.Startup
	if b.Unbounded {
		return "unbounded"
	}
	return fmt.Sprintf("%s from the %s", secs(b.Budget), b.Source)
}

// dedupe drops repeated evidence (the same scenario, pod and span).
func dedupe(ev []Evidence) []Evidence {
	seen := map[[4]string]bool{}
	var out []Evidence
	for _, e := range ev {
		k := [4]string{e.Run, e.Scenario, e.Pod, fmt.Sprint(e.From, e.To)}
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}
