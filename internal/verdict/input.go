package verdict

import (
	"cmp"
	"slices"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
)

// Input is everything a rule may read: the recorded run, the timing oracle, the faults and the
// rule's own parameters. The expected outcome is stated by which rules a scenario lists and by
// their parameters (for example no-forced-kill with expected=true). Rules never modify Input.
type Input struct {
	// Entries is the timeline in time order.
	Entries []timeline.Entry
	// Requests is every load request (any order).
	Requests []timeline.Request
	// Oracle holds the windows computed from the target's pod spec.
	Oracle oracle.Oracle
	// Faults are the injected faults on the timeline. When nil they are derived from the
	// timeline's fault entries (FaultWindows).
	Faults []timeline.FaultWindow
	// Declared are the faults the scenario declares, named as on the timeline. Each must have left
	// its trace (timeline.DeclaredFault.Shortfall: injected on time and for its duration, or a skip
	// saying why not); one that did not makes every rule that selects it INCONCLUSIVE, like a skip.
	Declared []timeline.DeclaredFault
	// Load is when the load ran. When zero it is derived from the requests, or else from the
	// timeline's load windows.
	Load Span
	// LoadRate is the rate the scenario asked of the load, in requests per second (its load.rate).
	// Zero when not known: the rate the load achieved is then not checked (NeedsLoad).
	LoadRate float64
	// Params are the parameters of the rule being evaluated (set by Evaluate).
	Params Params
}

// Span is an interval of timeline offsets.
type Span struct {
	Start time.Duration `json:"start"`
	End   time.Duration `json:"end"`
}

// Contains reports whether t lies in [Start, End].
func (s Span) Contains(t time.Duration) bool { return t >= s.Start && t <= s.End }

// faults returns Input.Faults or the windows derived from the timeline.
func (in Input) faults() []timeline.FaultWindow {
	if in.Faults != nil {
		return in.Faults
	}
	return timeline.FaultWindows(in.Entries)
}

// selectedFaults returns the faults a rule judges: those whose name or type is in the "fault"
// parameter, or every fault when it is not given; skipped faults are returned separately.
func (in Input) selectedFaults() (active, skipped []timeline.FaultWindow) {
	for _, f := range in.faults() {
		if !in.selects(f.Name, f.Type) {
			continue
		}
		if f.Skipped {
			skipped = append(skipped, f)
		} else {
			active = append(active, f)
		}
	}
	return active, skipped
}

// selects reports whether the fault named name, of type typ, is one the rule judges: its name or
// type is in the "fault" parameter, or the parameter is not given.
func (in Input) selects(name, typ string) bool {
	want := in.Params.List("fault")
	return len(want) == 0 || slices.Contains(want, name) || slices.Contains(want, typ)
}

// loadSpan returns Input.Load, or the span of the requests, or of the timeline's load windows.
func (in Input) loadSpan() (Span, bool) {
	if in.Load != (Span{}) {
		return in.Load, true
	}
	if len(in.Requests) > 0 {
		s := Span{Start: in.Requests[0].T, End: in.Requests[0].T}
		for _, r := range in.Requests {
			s.Start = min(s.Start, r.T)
			s.End = max(s.End, r.T)
		}
		return s, true
	}
	var s Span
	found := false
	for _, e := range in.Entries {
		if e.Kind != timeline.KindLoad {
			continue
		}
		if !found {
			s = Span{Start: e.T - time.Second, End: e.T}
			found = true
		}
		s.End = e.T
	}
	return s, found
}

// sortedRequests returns the requests ordered by start, then Seq (Input.Requests itself when already
// sorted; callers must not modify it).
func (in Input) sortedRequests() []timeline.Request {
	byStart := func(a, b timeline.Request) int {
		if c := cmp.Compare(a.T, b.T); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	}
	if slices.IsSortedFunc(in.Requests, byStart) {
		return in.Requests
	}
	out := slices.Clone(in.Requests)
	slices.SortFunc(out, byStart)
	return out
}

// sortedEntries returns the entries ordered by T, then Seq (Input.Entries itself when already
// sorted; callers must not modify it).
func (in Input) sortedEntries() []timeline.Entry {
	byT := func(a, b timeline.Entry) int {
		if c := cmp.Compare(a.T, b.T); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	}
	if slices.IsSortedFunc(in.Entries, byT) {
		return in.Entries
	}
	out := slices.Clone(in.Entries)
	slices.SortStableFunc(out, byT)
	return out
}
