package runner

import (
	"fmt"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/observers"
)

// verdictJudge is the real judger: the oracle from the live pod spec (with the scenario's oracle
// options), then every expected rule from the verdict registry, over the timeline with every
// restart's cause re-decided once late events have arrived.
type verdictJudge struct{}

// declaredFaults is every fault of sc (the run's scenario: sized and with its holds resolved, as
// planFaults left it), named as on the timeline and due at loadStart plus its offset. The judge reads
// them from the scenario itself, not from the schedule, so a fault the schedule lost is still
// compared with the timeline.
func declaredFaults(sc *scenario.Scenario, loadStart time.Duration) []timeline.DeclaredFault {
	out := make([]timeline.DeclaredFault, 0, len(sc.Faults))
	for i, f := range sc.Faults {
		out = append(out, timeline.DeclaredFault{Name: faultName(i), Type: f.Type, Due: loadStart + f.At, Duration: f.Duration})
	}
	return out
}

// Judge implements judger.
func (verdictJudge) Judge(in judgeInput) (*oracle.Oracle, []verdict.Result, error) {
	o, err := scenarioOracle(in.Scenario, in.Pod)
	if err != nil {
		return nil, nil, err
	}
	vin := verdict.Input{
		Entries:  observers.AttributeRestarts(in.Entries),
		Requests: in.Requests,
		Oracle:   o,
		Load:     verdict.Span{Start: in.LoadStart, End: in.LoadEnd},
		Declared: declaredFaults(in.Scenario, in.LoadStart),
		LoadRate: float64(in.Scenario.Load.Rate),
	}
	results := make([]verdict.Result, 0, len(in.Scenario.Expect))
	for _, e := range in.Scenario.Expect {
		res, err := verdict.Evaluate(vin, verdict.Spec{Rule: e.Rule, Params: e.Params, Tolerance: e.Tolerance})
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", in.Scenario.File, e.Line, err)
		}
		results = append(results, res)
	}
	return &o, results, nil
}
