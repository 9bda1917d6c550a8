// Package tune turns the evidence of recorded runs into probe and shutdown settings: per workload
// and container, each field's current value, the recommended one, the formula that produced it and
// the measurements it rests on (scenario, pod, times). A field without evidence is left alone and
// names the scenario that would supply it; a number is never made up. It reads report directories
// only (report.json, timeline.jsonl, requests.jsonl) and never talks to a cluster.
package tune

import (
	"time"

	"github.com/probegate/probegate/internal/oracle"
)

// Status says what a recommendation does to its field.
type Status string

// Recommendation statuses.
const (
	Keep       Status = "keep"        // the evidence fits the current value
	Change     Status = "change"      // the evidence needs a different value
	Add        Status = "add"         // the field (a startup probe, a preStop hook) is missing and needed
	LeftAlone  Status = "left-alone"  // too little evidence, or the evidence is not recorded
	CannotTune Status = "cannot-tune" // the evidence shows a fault no number fixes
)

// Options are the margins of the formulas (docs/tune.md). Zero values take the defaults.
type Options struct {
	// StartupMargin multiplies the p99 bootstrap time (default 1.5).
	StartupMargin float64
	// WithdrawalMargin is added to the longest withdrawal → last request time (default 1 s).
	WithdrawalMargin time.Duration
	// GraceMargin is added to withdrawal + drain + cleanup (default oracle.DefaultMargin, 2 s).
	GraceMargin time.Duration
}

// Defaults for Options.
const (
	DefaultStartupMargin    = 1.5
	DefaultWithdrawalMargin = time.Second
	DefaultGraceMargin      = oracle.DefaultMargin
)

func (o Options) withDefaults() Options {
	if o.StartupMargin <= 0 {
		o.StartupMargin = DefaultStartupMargin
	}
	if o.WithdrawalMargin <= 0 {
		o.WithdrawalMargin = DefaultWithdrawalMargin
	}
	if o.GraceMargin <= 0 {
		o.GraceMargin = DefaultGraceMargin
	}
	return o
}

// Result is every workload's recommendations from a set of runs.
type Result struct {
	// Runs are the report directories read.
	Runs      []string   `json:"runs"`
	Workloads []Workload `json:"workloads"`
	// Skipped lists scenarios that gave no evidence and why (an error, no oracle).
	Skipped []string `json:"skipped,omitempty"`
}

// Workload is one workload and container with the recommendations for its fields.
type Workload struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Container string `json:"container"`
	// Target is how the report named what ran ("fixture good", "target shop").
	Target string `json:"target,omitempty"`
	// SpecSource says where the current settings came from: the spec recorded on the timeline, or
	// (for runs that predate it) the oracle in report.json, which lacks some fields.
	SpecSource string `json:"specSource"`
	// Scenarios are the scenario runs the evidence came from ("run-dir: name/variant").
	Scenarios       []string         `json:"scenarios"`
	Recommendations []Recommendation `json:"recommendations"`
}

// Recommendation is one field's verdict: current → recommended, why, and the evidence.
type Recommendation struct {
	// Field is the path in the container (or pod, for terminationGracePeriodSeconds) spec.
	Field       string `json:"field"`
	Status      Status `json:"status"`
	Current     string `json:"current"`
	Recommended string `json:"recommended,omitempty"`
	// Formula is the rule with this workload's numbers in it.
	Formula string `json:"formula,omitempty"`
	Why     string `json:"why"`
	// Supply names the scenario (or recording) that would supply missing evidence.
	Supply   string     `json:"supply,omitempty"`
	Evidence []Evidence `json:"evidence,omitempty"`
	// NotPatched says why a change is not in the -o patch output (it needs the app or a person).
	NotPatched string `json:"notPatched,omitempty"`
	// Motivated are the scenario runs whose measurements set the recommended value (evidence the
	// formula ignored is not counted): what tune --verify re-runs to show the change works.
	Motivated []ScenarioRef `json:"motivated,omitempty"`

	patch *fieldPatch
}

// ScenarioRef names one scenario run: its report directory and its label ("name/variant").
type ScenarioRef struct {
	Run      string `json:"run"`
	Scenario string `json:"scenario"`
}

// Patched reports whether the recommendation is in the -o patch output (a change or addition
// a strategic-merge patch can make).
func (r Recommendation) Patched() bool {
	return (r.Status == Change || r.Status == Add) && r.patch != nil
}

// Evidence is one measurement on a recorded timeline. Offsets count from the scenario's timeline
// start, like t in timeline.jsonl; Seq names the timeline entry, RequestSeq the request.
type Evidence struct {
	Run        string        `json:"run"`
	Scenario   string        `json:"scenario"`
	Pod        string        `json:"pod,omitempty"`
	From       time.Duration `json:"from"`
	To         time.Duration `json:"to"`
	Seq        int64         `json:"seq,omitempty"`
	RequestSeq uint64        `json:"requestSeq,omitempty"`
	// Value is the measured duration (usually To − From).
	Value time.Duration `json:"value"`
	Note  string        `json:"note"`

	// ignored marks a sample shown for context that the formula did not use.
	ignored bool
}

// fieldPatch is one change for the strategic-merge patch: a value at path inside the container
// (Container) or the pod spec.
type fieldPatch struct {
	container bool
	path      []string
	value     any
}
