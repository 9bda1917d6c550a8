package verdict

import (
	"fmt"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
)

// maxEvidence bounds how many items of one sort a result lists; figures carry the totals.
const maxEvidence = 20

func atEntry(t time.Duration, seq int64, format string, args ...any) Evidence {
	return Evidence{T: t, Seq: seq, Note: fmt.Sprintf(format, args...)}
}

func atRequest(r timeline.Request, format string, args ...any) Evidence {
	return Evidence{T: r.T, RequestSeq: r.Seq, Note: fmt.Sprintf(format, args...)}
}

func atTime(t time.Duration, format string, args ...any) Evidence {
	return Evidence{T: t, Note: fmt.Sprintf(format, args...)}
}

// add appends ev unless the result already lists maxEvidence items.
func (r *Result) add(ev Evidence) {
	if len(r.Evidence) < maxEvidence {
		r.Evidence = append(r.Evidence, ev)
	}
}

// failAt marks the result failed at t (keeping the earliest failure).
func (r *Result) failAt(t time.Duration) {
	r.Status = Fail
	if r.At == nil || t < *r.At {
		at := t
		r.At = &at
	}
}

func (r *Result) figure(name string, v float64) {
	if r.Figures == nil {
		r.Figures = map[string]float64{}
	}
	r.Figures[name] = v
}

func (r *Result) window(name, pod string, from, to time.Duration, basis string) {
	r.Windows = append(r.Windows, Window{Name: name, Pod: pod, From: from, To: to, Basis: basis})
}

func secs(d time.Duration) float64 { return d.Seconds() }

// dur prints a duration rounded to milliseconds.
func dur(d time.Duration) string { return d.Round(time.Millisecond).String() }

// windowWords is "[1s, 3s] + 2s propagation = by 5s (readiness: F=2 × P=1s ...)".
func windowWords(w oracle.Window) string {
	return fmt.Sprintf("%s (%s)", w.String(), w.Explain)
}

// skippedResult is the INCONCLUSIVE result of a rule whose every selected fault was skipped.
func skippedResult(skipped []timeline.FaultWindow) Result {
	r := Result{Status: Inconclusive, Expected: "the fault this rule judges to have been injected"}
	r.Observed = "not judged: fault skipped: " + skipped[0].SkipNote
	for _, f := range skipped {
		r.add(atEntry(f.Start, f.StartSeq, "%s skipped: %s", f.Type, f.SkipNote))
		r.Unshown = append(r.Unshown, f.Unproven())
	}
	return r
}

// probeExplanation returns the last probe failure of the given probe kind for pod in (from, to],
// the kubelet's own words for why it acted (events are lossy: explanation, never proof).
func probeExplanation(entries []timeline.Entry, pod, probe string, from, to time.Duration) (timeline.Entry, bool) {
	var last timeline.Entry
	found := false
	for _, e := range entries {
		if e.T > to {
			break
		}
		if e.T > from && e.Kind == timeline.KindProbe && e.Probe != nil && e.Pod == pod && e.Probe.Probe == probe {
			last, found = e, true
		}
	}
	return last, found
}

// explainRestart adds the liveness probe failure that preceded restart e, when the timeline has one.
func (r *Result) explainRestart(entries []timeline.Entry, e timeline.Entry) {
	if p, ok := probeExplanation(entries, e.Pod, timeline.ProbeLiveness, e.T-5*time.Minute, e.T); ok {
		r.add(atEntry(p.T, p.Seq, "%s: %s (×%d)", e.Pod, p.Probe.Message, p.Probe.Count))
	}
}

// firstProbeFailure returns pod's first probe failure of the given kind at or after t.
func firstProbeFailure(entries []timeline.Entry, pod, probe string, t time.Duration) (timeline.Entry, bool) {
	for _, e := range entries {
		if e.T >= t && e.Kind == timeline.KindProbe && e.Probe != nil && e.Pod == pod && e.Probe.Probe == probe {
			return e, true
		}
	}
	return timeline.Entry{}, false
}

// unshown records something the rule could not show: the verdict is INCONCLUSIVE unless it has
// already failed on evidence it did see.
func (r *Result) unshown(why string) {
	if r.Status != Fail {
		r.Status = Inconclusive
	}
	r.Unshown = append(r.Unshown, why)
}

// nothingToJudge records that the timeline holds nothing of what the rule judges (no fault, no
// deletion, no load): the verdict is INCONCLUSIVE, and observed says what was missing.
func (r *Result) nothingToJudge(observed string) {
	r.Observed = observed
	r.At = nil
	r.unshown(observed)
}
