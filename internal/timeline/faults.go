package timeline

import (
	"slices"
	"strings"
	"time"
)

// FaultWindow is one fault of a run as the timeline shows it: from its inject action to its revert
// (Reverted false: never reverted, or a one-shot action such as a pod deletion; End is then Start),
// or a fault the harness skipped (Skipped, with SkipNote saying why). Effect is the fault's proof
// of effect while it acted: EffectConfirmed, EffectNotObserved, or empty when none was recorded.
// Verdicts and reports both read fault windows from FaultWindows, so they always agree.
type FaultWindow struct {
	Name       string            `json:"name,omitempty"`
	Type       string            `json:"type"`
	Target     string            `json:"target,omitempty"`
	Pods       []string          `json:"pods,omitempty"`
	Start      time.Duration     `json:"start"`
	StartSeq   int64             `json:"startSeq"`
	End        time.Duration     `json:"end"`
	EndSeq     int64             `json:"endSeq,omitempty"`
	Reverted   bool              `json:"reverted"`
	Skipped    bool              `json:"skipped,omitempty"`
	SkipNote   string            `json:"skipNote,omitempty"`
	Effect     string            `json:"effect,omitempty"`
	EffectNote string            `json:"effectNote,omitempty"`
	Params     map[string]string `json:"params,omitempty"`
}

// Acted reports whether the fault was injected and its effect proven.
func (f FaultWindow) Acted() bool { return !f.Skipped && f.Effect == EffectConfirmed }

// Unproven says in one line why the fault cannot count as having acted, or "" when it acted.
func (f FaultWindow) Unproven() string {
	label := f.Type
	if f.Name != "" && f.Name != f.Type {
		label += " (" + f.Name + ")"
	}
	switch {
	case f.Skipped:
		return label + " was skipped: " + f.SkipNote
	case f.Effect == EffectNotObserved:
		return label + " was injected but its effect was not observed: " + f.EffectNote
	case f.Effect == "":
		return label + " was injected but no proof of its effect was recorded"
	}
	return ""
}

// FaultWindows pairs the fault actions of entries (in time order) into windows: each inject with
// the next revert of the same fault (by Name, else Type and Target; else the oldest open fault of
// its type). A skip becomes a Skipped window. Each window takes the proof of effect of the observe
// actions of the same fault recorded from its inject until its revert (for a one-shot fault, until
// the fault's next inject): confirmed when any was, else not-observed when one said so.
func FaultWindows(entries []Entry) []FaultWindow {
	pods := map[string]bool{}
	for _, e := range entries {
		if e.Pod != "" && e.Kind != KindFault {
			pods[e.Pod] = true
		}
	}
	key := func(f *FaultAction) string {
		if f.Name != "" {
			return "name:" + f.Name
		}
		return "type:" + f.Type + "/" + f.Target
	}
	var out []FaultWindow
	open := map[string][]int{} // key → indexes of unreverted windows, oldest first
	last := map[string]int{}   // key → index of the latest window, reverted or not
	for _, e := range entries {
		f := e.Fault
		if e.Kind != KindFault || f == nil {
			continue
		}
		switch f.Action {
		case FaultInject, FaultSkip:
			w := FaultWindow{Name: f.Name, Type: f.Type, Target: f.Target, Start: e.T, StartSeq: e.Seq, End: e.T, Params: f.Params}
			w.Pods = faultPods(e, pods)
			if f.Action == FaultSkip {
				w.Skipped, w.SkipNote = true, f.Detail
				out = append(out, w)
				continue
			}
			out = append(out, w)
			open[key(f)] = append(open[key(f)], len(out)-1)
			last[key(f)] = len(out) - 1
		case FaultRevert:
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
		case FaultObserve:
			if f.Params[ParamPhase] == PhaseAfter {
				continue // proof that the revert took, not that the fault acted
			}
			i, ok := last[key(f)]
			if !ok {
				continue
			}
			w := &out[i]
			if w.Reverted && e.T > w.End {
				continue
			}
			switch f.Params[ParamEffect] {
			case EffectConfirmed:
				w.Effect, w.EffectNote = EffectConfirmed, f.Detail
			case EffectNotObserved:
				if w.Effect != EffectConfirmed {
					w.Effect, w.EffectNote = EffectNotObserved, f.Detail
				}
			}
		}
	}
	return out
}

// faultPods names the pods a fault entry aims at: the entry's Pod, else its Target or its "pod" /
// "pods" parameter when they name pods seen on the timeline (a "pod/" prefix is allowed).
func faultPods(e Entry, seen map[string]bool) []string {
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

// MarkWatchGap names the mark an observer writes when one of its watches ended early and it lists
// again: what changed meanwhile is only known from the relist (entries marked Recovered).
const MarkWatchGap = "watch-gap"

// Gap is a stretch in which an observer's watch was broken: changes in it may be missing (a dip that
// came and went) or carry only the relist's time (Recovered entries).
type Gap struct {
	From, To time.Duration
	Seq      int64
	Detail   string
}

// gapSettle bounds how long after a watch-gap mark the relist's recovered entries are taken as
// part of the same gap.
const gapSettle = 30 * time.Second

// WatchGaps returns the watch gaps of entries (in time order): each watch-gap mark until the last
// recovered entry that followed it within gapSettle (at least one second), and each recovered entry
// with no mark before it, as a gap that ends at its own time.
func WatchGaps(entries []Entry) []Gap {
	var out []Gap
	for _, e := range entries {
		switch {
		case e.Kind == KindMark && e.Mark != nil && e.Mark.Name == MarkWatchGap:
			out = append(out, Gap{From: e.T, To: e.T + time.Second, Seq: e.Seq, Detail: e.Mark.Detail})
		case e.Recovered:
			if n := len(out); n > 0 && e.T-out[n-1].From <= gapSettle {
				out[n-1].To = max(out[n-1].To, e.T)
				continue
			}
			out = append(out, Gap{From: e.T - time.Second, To: e.T, Seq: e.Seq, Detail: "entry recovered from a relist"})
		}
	}
	return out
}
