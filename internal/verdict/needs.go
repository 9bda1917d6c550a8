package verdict

import (
	"fmt"
	"slices"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// Needs names what a rule's judgement rests on. After the rule has judged, Evaluate checks that the
// run recorded it: a PASS that rests on something the run could not see becomes INCONCLUSIVE, with
// each missing thing named in Result.Unshown. A FAIL stands (its evidence is real), except for a
// rule that judges a fault's effect when none of its faults acted: there was nothing to judge.
// Every rule rests on its faults having acted as the scenario declares them: a skipped or unproven
// fault, and a declared fault that left no trace or ran late or short (Input.Declared), are gaps.
type Needs uint8

// What a rule may need.
const (
	// NeedsFaultEffect: the rule judges what its faults did, so they must have been injected with
	// their effect proven (timeline.FaultWindow.Acted).
	NeedsFaultEffect Needs = 1 << iota
	// NeedsEndpoints: the rule reads EndpointSlice transitions; a watch gap during the run may hide
	// a withdrawal that came and went.
	NeedsEndpoints
	// NeedsRestarts: the rule reads restarts and their causes; a watch gap may hide one and an
	// unknown cause may be the one the rule forbids.
	NeedsRestarts
	// NeedsAttribution: the rule reads which pod served each request, so at least
	// timeline.MinAttributionCoverage of the requests that reached a pod must name a pod of the run,
	// over the run and over those sent inside the windows the rule judged, and conntrack must
	// contradict the header on at most timeline.MaxAttributionDisagreement of them (attributionGaps).
	NeedsAttribution
	// NeedsLoad: the rule judges what the load's requests met, so the load must have sent at least
	// MinLoadShare of the rate the scenario asked (Input.LoadRate): a thinned load (a starved
	// harness, a slow agent) cannot show failed requests or traffic to a withdrawn pod.
	NeedsLoad
	// NeedsPods: the rule reads pod deletions and container exits; a watch gap may hide an exit
	// (its code and time), leaving only the relist's tombstone.
	NeedsPods
)

// MinLoadShare is the least share of the asked rate the load must achieve over the load's span
// (outside the windows of faults that raise the rate) for a rule that NeedsLoad to PASS.
const MinLoadShare = 0.9

// raisedRateFault is the fault type that raises the load's rate on purpose: its window is left out
// of the achieved rate.
const raisedRateFault = "overload"

// gate applies the run's blind spots to res (see Needs).
func (n Needs) gate(in Input, res *Result) {
	var unshown []string
	// A declared fault that ran late or short, or left no trace, cannot count as having acted.
	strayed := map[string]bool{}
	windows := in.faults()
	for _, d := range in.Declared {
		if !in.selects(d.Name, d.Type) {
			continue
		}
		if u := d.Shortfall(windows); u != "" {
			unshown = append(unshown, u)
			strayed[d.Name] = true
		}
	}
	active, skipped := in.selectedFaults()
	acted := 0
	for _, f := range active {
		switch {
		case !f.Acted():
			unshown = append(unshown, f.Unproven())
		case !strayed[f.Name]:
			acted++
		}
	}
	for _, f := range skipped {
		unshown = append(unshown, f.Unproven())
	}
	noFaultActed := acted == 0 && (len(active)+len(skipped) > 0 || len(strayed) > 0)
	if n&(NeedsEndpoints|NeedsRestarts|NeedsPods) != 0 {
		span, ok := in.judgedSpan()
		for _, g := range timeline.WatchGaps(in.Entries) {
			if !ok || (g.To >= span.Start && g.From <= span.End) {
				unshown = append(unshown, fmt.Sprintf("a watch gap at %s–%s (%s) may hide changes in that stretch", dur(g.From), dur(g.To), g.Detail))
			}
		}
	}
	if n&NeedsRestarts != 0 {
		only := setOf(in.Params.List("pods"))
		for _, e := range in.Entries {
			if e.Kind == timeline.KindRestart && e.Restart != nil && e.Restart.Cause == timeline.CauseUnknown && (len(only) == 0 || only[e.Pod]) {
				unshown = append(unshown, fmt.Sprintf("%s container %s restarted at %s for an unknown cause (%s)", e.Pod, e.Restart.Container, dur(e.T), e.Restart.Evidence))
			}
		}
	}
	if n&NeedsAttribution != 0 {
		unshown = append(unshown, attributionGaps(in, res)...)
	}
	if n&NeedsLoad != 0 {
		if u := in.thinnedLoad(); u != "" {
			unshown = append(unshown, u)
		}
	}
	if len(unshown) == 0 {
		return
	}
	switch {
	case res.Status == Pass, res.Status == Inconclusive:
	case res.Status == Fail && n&NeedsFaultEffect != 0 && noFaultActed:
		res.Observed = "not judged: no fault acted (" + res.Observed + ")"
		res.At = nil
	default:
		return
	}
	res.Status = Inconclusive
	for _, u := range unshown {
		if !slices.Contains(res.Unshown, u) {
			res.Unshown = append(res.Unshown, u)
		}
	}
}

// judgedSpan is the stretch a rule judges: the load, widened to every fault window.
func (in Input) judgedSpan() (Span, bool) {
	s, ok := in.loadSpan()
	for _, f := range in.faults() {
		if !ok {
			s, ok = Span{Start: f.Start, End: f.End}, true
		}
		s.Start, s.End = min(s.Start, f.Start), max(s.End, f.End)
	}
	return s, ok
}

// thinnedLoad says how the load fell short of the asked rate ("" when it did not, or when the
// asked rate or the load's span is not known): the requests sent in the load's span, outside the
// windows of faults that raise the rate, over that time.
func (in Input) thinnedLoad() string {
	span, ok := in.loadSpan()
	if in.LoadRate <= 0 || !ok || span.End <= span.Start {
		return ""
	}
	var raised []Span
	for _, f := range in.faults() {
		if f.Type == raisedRateFault && !f.Skipped {
			raised = append(raised, Span{Start: max(f.Start, span.Start), End: min(f.End, span.End)})
		}
	}
	// The load's span ends when the harness has collected it (in-flight requests, attribution, the
	// faults' reverts); the rate is what was sent, so it is measured up to the last send.
	last, sentAny := span.Start, false
	for _, r := range in.Requests {
		if span.Contains(r.T) {
			last, sentAny = max(last, r.T), true
		}
	}
	if sentAny {
		span.End = min(span.End, last+time.Duration(float64(time.Second)/in.LoadRate))
	}
	judged := span.End - span.Start
	for _, r := range raised {
		judged -= max(r.End-r.Start, 0)
	}
	if judged < time.Second {
		return ""
	}
	sent := 0
	for _, r := range in.Requests {
		if span.Contains(r.T) && !slices.ContainsFunc(raised, func(s Span) bool { return s.Contains(r.T) }) {
			sent++
		}
	}
	achieved := float64(sent) / judged.Seconds()
	if achieved >= MinLoadShare*in.LoadRate {
		return ""
	}
	return fmt.Sprintf("the load sent %.1f/s of the asked %g/s over %s–%s (%.0f %%, below %.0f %%): a thinned load cannot show failed requests or traffic to a withdrawn pod",
		achieved, in.LoadRate, dur(span.Start), dur(span.End), 100*achieved/in.LoadRate, 100*MinLoadShare)
}
