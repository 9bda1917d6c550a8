package verdict

import "time"

// Status is a verdict's outcome.
type Status string

// Verdict outcomes. A PASS must be earned: a rule that could not see what it judges (its fault was
// skipped or had no proven effect, a watch gap hid part of its window, a restart's cause is
// unknown, no request could be attributed) is INCONCLUSIVE, never PASS.
const (
	Pass         Status = "PASS"
	Fail         Status = "FAIL"
	Inconclusive Status = "INCONCLUSIVE"
	// NotApplicable marks a verdict of a scenario the target does not take by its own declaration
	// (no dependency to slow, no request that takes a while, a workload kind the fault does not act
	// on) or that the cluster cannot host (too few nodes, in the default suite): nothing was run,
	// the reason is the scenario report's NotApplicable, and the exit code does not count it.
	NotApplicable Status = "NOT APPLICABLE"
)

// Evidence points at what decided a verdict: a timeline entry (Seq), a request (RequestSeq), or a
// bare figure, always with the offset it refers to.
type Evidence struct {
	T          time.Duration `json:"t"`
	Seq        int64         `json:"seq,omitempty"`
	RequestSeq uint64        `json:"requestSeq,omitempty"`
	Note       string        `json:"note"`
}

// Result is one rule's verdict on one run. Expected states the rule with its window or bound;
// Observed states what happened, in numbers. At is the moment the rule failed, when it has one.
type Result struct {
	Rule     string         `json:"rule"`
	Title    string         `json:"title"`
	Status   Status         `json:"status"`
	Expected string         `json:"expected"`
	Observed string         `json:"observed"`
	At       *time.Duration `json:"at,omitempty"`
	// Unshown says, for an INCONCLUSIVE verdict, what could not be shown and why (one line each).
	Unshown []string `json:"unshown,omitempty"`
	// Tolerances are the hand-set allowances the judgement used, each with its reason.
	Tolerances []string `json:"tolerances,omitempty"`
	// Caveats qualify a verdict without changing it, one line each: a FAIL whose evidence is real but
	// which something besides the target may have brought about (a CPU-starved host), or a PASS that
	// may rest on less than the scenario asked (a starved stretch of its span).
	Caveats  []string   `json:"caveats,omitempty"`
	Evidence []Evidence `json:"evidence,omitempty"`
	// Figures holds the key numbers behind the verdict (for summaries and plots).
	Figures map[string]float64 `json:"figures,omitempty"`
	// Measure is the one quantity the rule judged, with its bound (nil when the rule measured
	// nothing: no deletion, no fault, no load).
	Measure *Measure `json:"measure,omitempty"`
	// Windows are the oracle windows the rule judged against, placed on the timeline.
	Windows []Window `json:"windows,omitempty"`
}

// Window is an oracle window placed on the timeline: the span [From, To] (offsets from the
// timeline's start) in which the rule expected an effect, for one pod or the whole target.
// Basis shows the arithmetic.
type Window struct {
	Name  string        `json:"name"`
	Pod   string        `json:"pod,omitempty"`
	From  time.Duration `json:"from"`
	To    time.Duration `json:"to"`
	Basis string        `json:"basis,omitempty"`
}
