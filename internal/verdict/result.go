// Package verdict judges a recorded timeline against a scenario's expectations. Each rule lives in
// its own file and returns a Result with the evidence that decided it.
package verdict

import "time"

// Status is a verdict's outcome.
type Status string

// Verdict outcomes.
const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	Skip Status = "SKIP" // the rule does not apply to this run (for example no cooperative fault)
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
	Evidence []Evidence     `json:"evidence,omitempty"`
	// Figures holds the key numbers behind the verdict (for summaries and plots).
	Figures map[string]float64 `json:"figures,omitempty"`
}
