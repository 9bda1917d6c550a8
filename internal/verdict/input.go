package verdict

import (
	"cmp"
	"slices"
	"strings"
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
	Faults []FaultWindow
	// Load is when the load ran. When zero it is derived from the requests, or else from the
	// timeline's load windows.
	Load Span
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

// FaultWindow is one injected fault from its inject action to its revert (Reverted false: never
// reverted, or a one-shot action such as a pod deletion; End is then Start).
type FaultWindow struct {
	Name     string            `json:"name,omitempty"`
	Type     string            `json:"type"`
	Target   string            `json:"target,omitempty"`
	Pods     []string          `json:"pods,omitempty"`
	Start    time.Duration     `json:"start"`
	StartSeq int64             `json:"startSeq"`
	End      time.Duration     `json:"end"`
	EndSeq   int64             `json:"endSeq,omitempty"`
	Reverted bool              `json:"reverted"`
	Skipped  bool              `json:"skipped,omitempty"`
	SkipNote string            `json:"skipNote,omitempty"`
	Params   map[string]string `json:"params,omitempty"`
}

// FaultWindows pairs the timeline's fault actions into windows: each inject with the next revert of
// the same fault (by Name, else Type and Target; else the oldest open fault of its type). A skip
// becomes a Skipped window. The faulted pods are named by faultPods.
func FaultWindows(entries []timeline.Entry) []FaultWindow {
	pods := map[string]bool{}
	for _, e := range entries {
		if e.Pod != "" && e.Kind != timeline.KindFault {
			pods[e.Pod] = true
		}
	}
	key := func(f *timeline.FaultAction) string {
		if f.Name != "" {
			return "name:" + f.Name
		}
		return "type:" + f.Type + "/" + f.Target
	}
	var out []FaultWindow
	open := map[string][]int{} // key → indexes of unreverted windows, oldest first
	for _, e := range entries {
		f := e.Fault
		if e.Kind != timeline.KindFault || f == nil {
			continue
		}
		switch f.Action {
		case timeline.FaultInject, timeline.FaultSkip:
			w := FaultWindow{Name: f.Name, Type: f.Type, Target: f.Target, Start: e.T, StartSeq: e.Seq, End: e.T, Params: f.Params}
			w.Pods = faultPods(e, pods)
			if f.Action == timeline.FaultSkip {
				w.Skipped, w.SkipNote = true, f.Detail
				out = append(out, w)
				continue
			}
			out = append(out, w)
			open[key(f)] = append(open[key(f)], len(out)-1)
		case timeline.FaultRevert:
			k := key(f)
			if len(open[k]) == 0 {
				// The revert names the fault differently: take the oldest open one of its type.
				for other, idx := range open {
					if len(idx) > 0 && out[idx[0]].Type == f.Type && (len(open[k]) == 0 || out[idx[0]].Start < out[open[k][0]].Start) {
						k = other
					}
				}
			}
			if idx := open[k]; len(idx) > 0 {
				w := &out[idx[0]]
				w.End, w.EndSeq, w.Reverted = e.T, e.Seq, true
				open[k] = idx[1:]
			}
		}
	}
	return out
}

// faultPods names the pods a fault entry aims at: the entry's Pod, else its Target or its "pod" /
// "pods" parameter when they name pods seen on the timeline (a "pod/" prefix is allowed).
func faultPods(e timeline.Entry, seen map[string]bool) []string {
	if e.Pod != "" {
		return []string{e.Pod}
	}
	var out []string
	add := func(name string) {
		name = strings.TrimPrefix(strings.TrimSpace(name), "pod/")
		if seen[name] && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	add(e.Fault.Target)
	add(e.Fault.Params["pod"])
	for _, n := range strings.Split(e.Fault.Params["pods"], ",") {
		add(n)
	}
	return out
}

// faults returns Input.Faults or the windows derived from the timeline.
func (in Input) faults() []FaultWindow {
	if in.Faults != nil {
		return in.Faults
	}
	return FaultWindows(in.Entries)
}

// selectedFaults returns the faults a rule judges: those whose name or type is in the "fault"
// parameter, or every fault when it is not given; skipped faults are returned separately.
func (in Input) selectedFaults() (active, skipped []FaultWindow) {
	want := map[string]bool{}
	for _, n := range in.Params.List("fault") {
		want[n] = true
	}
	for _, f := range in.faults() {
		if len(want) > 0 && !want[f.Name] && !want[f.Type] {
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
