package tune

import (
	"fmt"
	"path"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/timeline"
)

// lateTraffic measures, for each time a pod left rotation while the load ran, how long requests on
// new connections still reached it: from the moment routing should have stopped (the pod's
// deletion when it was in rotation then, since preStop starts there; else its endpoint going
// ready=false) to the start of the last such request before it was back in rotation. Requests on
// kept-alive connections are counted apart (reused): closing them is the app's job, not routing's.
// A withdrawal is only evidence when the pod served attributed requests in the 2 s before it, and
// a request only counts while another endpoint was in rotation: with none, kube-proxy had nowhere
// else to send it (a shared outage), which is not routing lag.
func lateTraffic(s *scenarioRun) (samples []Evidence, reused int) {
	hist := timeline.Endpoints(s.entries)
	deleted := map[string]timeline.Entry{}
	for _, e := range s.entries {
		if e.Kind == timeline.KindPod && e.PodChange != nil && e.PodChange.Field == "deleting" {
			if _, ok := deleted[e.Pod]; !ok {
				deleted[e.Pod] = e
			}
		}
	}
	byPod := map[string][]timeline.Request{}
	for _, q := range s.requests {
		if q.Pod != "" {
			byPod[q.Pod] = append(byPod[q.Pod], q)
		}
	}
	for _, pod := range hist.Pods {
		steps := hist.ByPod[pod]
		for i, st := range steps {
			if st.InRotation() || i == 0 || !steps[i-1].InRotation() {
				continue
			}
			ref, refSeq, what := st.T, st.Seq, "endpoint ready=false"
			switch {
			case !st.Present:
				what = "endpoint removed"
			case st.Terminating:
				what = "endpoint terminating"
			}
			if d, ok := deleted[pod]; ok && d.T <= st.T && hist.At(pod, d.T).InRotation() {
				ref, refSeq, what = d.T, d.Seq, "pod deleted (preStop starts)"
			}
			if !s.underLoad(ref) {
				continue
			}
			back := time.Duration(1<<63 - 1)
			for _, nx := range steps[i+1:] {
				if nx.InRotation() {
					back = nx.T
					break
				}
			}
			served := false
			var last *timeline.Request
			for j, q := range byPod[pod] {
				if q.T >= ref-2*time.Second && q.T < ref {
					served = true
				}
				if q.T < ref || q.T >= back {
					continue
				}
				if !elsewhere(hist, pod, q.T) {
					continue // nowhere else to send it: not routing lag
				}
				if q.Reused {
					reused++
					continue
				}
				if last == nil || q.T > last.T {
					last = &byPod[pod][j]
				}
			}
			if !served {
				continue
			}
			if last == nil {
				ev := s.evidence(pod, ref, ref, refSeq, "%s at %s (seq %d): no request on a new connection reached it afterwards", what, at(ref), refSeq)
				samples = append(samples, ev)
				continue
			}
			ev := s.evidence(pod, ref, last.T, refSeq, "%s at %s (seq %d) → last request on a new connection started %s (request %d): %s later",
				what, at(ref), refSeq, at(last.T), last.Seq, secs(last.T-ref))
			ev.RequestSeq = last.Seq
			samples = append(samples, ev)
		}
	}
	return samples, reused
}

// recommendWithdrawal: withdrawal delay (preStop sleep or the app's own) ≥ the longer of the
// longest measured withdrawal → last request and the oracle's propagation allowance, + margin.
func recommendWithdrawal(g *group, opts Options) Recommendation {
	st := g.settings
	term := st.Oracle.Termination
	rec := Recommendation{Field: "lifecycle.preStop (withdrawal delay)", Current: fmt.Sprintf("%s (%s)", secs(term.Withdrawal), term.WithdrawalSource)}
	var samples []Evidence
	reused := 0
	for _, s := range g.scenarios {
		ev, r := lateTraffic(s)
		samples, reused = append(samples, ev...), reused+r
	}
	if len(samples) == 0 {
		rec.Status = LeftAlone
		rec.Why = "no pod with attributed traffic left rotation while the load ran"
		rec.Supply = "pod-delete-under-load (or rolling-update-under-load, eviction-under-load)"
		return rec
	}
	worst := longest(samples)
	// A run in which no request arrived late does not show that kube-proxy never lags: the delay is
	// never below the propagation allowance the verdicts judge routing by (terminating-before-exit
	// requires the process to outlive its withdrawal by it).
	lag, prop := worst.Value, st.Oracle.Propagation
	need := max(lag, prop) + opts.WithdrawalMargin
	n := wholeSeconds(need)
	rec.Evidence = dedupe(append([]Evidence{worst}, samples...))
	rec.Formula = fmt.Sprintf("withdrawal delay ≥ max(longest withdrawal → last new request %s (of %d withdrawals), propagation allowance %s) + margin %s = %s → %d s",
		secs(lag), len(samples), secs(prop), secs(opts.WithdrawalMargin), secs(need), n)
	if reused > 0 {
		rec.Why = fmt.Sprintf("; %d requests on kept-alive connections reached withdrawn pods: closing idle connections on shutdown is the app's job, no delay fixes it", reused)
	}
	if term.Withdrawal >= time.Duration(n)*time.Second {
		rec.Status, rec.Recommended = Keep, rec.Current
		rec.Why = "the current withdrawal delay outlasts the measured routing lag with margin" + rec.Why
		return rec
	}
	rec.Status, rec.Recommended = Change, fmt.Sprintf("%d s", n)
	rec.Why = "requests kept arriving after the pod left rotation for longer than the current delay" + rec.Why
	switch {
	case term.WithdrawalSource == "preStop sleep":
		rec.patch = &fieldPatch{container: true, path: []string{"lifecycle", "preStop", "sleep", "seconds"}, value: n}
	case st.container == nil && term.WithdrawalSource == "none":
		rec.NotPatched = "this report predates the recorded spec: whether the container has an exec or httpGet preStop hook is unknown; add `preStop: {sleep: {seconds: " + strconv.FormatInt(n, 10) + "}}` if it has none"
	case st.container == nil:
		rec.NotPatched = "the delay is the app's own (" + term.WithdrawalSource + "): raise it in the app's configuration and the annotation with it"
	default:
		rec.patch, rec.NotPatched = preStopPatch(st.container, term.WithdrawalSource, n)
	}
	return rec
}

// preStopPatch sets a preStop sleep of n seconds when the container has no preStop hook, a sleep
// action or an exec of plain `sleep N`; any other hook is the app's and is left to a person.
func preStopPatch(c *corev1.Container, source string, n int64) (*fieldPatch, string) {
	var h *corev1.LifecycleHandler
	if c.Lifecycle != nil {
		h = c.Lifecycle.PreStop
	}
	sleep := map[string]any{"seconds": n}
	switch {
	case source != "none" && source != "preStop sleep":
		return nil, "the delay is the app's own (" + source + "): raise it in the app's configuration and the annotation with it"
	case h == nil || h.Sleep != nil:
		return &fieldPatch{container: true, path: []string{"lifecycle", "preStop"}, value: map[string]any{"sleep": sleep}}, ""
	case h.Exec != nil && len(h.Exec.Command) == 2 && path.Base(h.Exec.Command[0]) == "sleep":
		// The exec is dropped ($patch-free: null deletes a key in a strategic merge) for the native sleep.
		return &fieldPatch{container: true, path: []string{"lifecycle", "preStop"}, value: map[string]any{"exec": nil, "sleep": sleep}}, ""
	}
	return nil, "the container's preStop hook does more than sleep: make it hold SIGTERM back for this long"
}

// elsewhere reports whether an endpoint other than pod's was in rotation at t.
func elsewhere(h timeline.EndpointHistory, pod string, t time.Duration) bool {
	for _, p := range h.ReadyAt(t) {
		if p != pod {
			return true
		}
	}
	return false
}
