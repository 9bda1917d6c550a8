package verdict

import (
	"fmt"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "readiness-not-withdrawn",
		Title: "The pods' endpoints stay ready through the fault",
		Doc: "No target pod's endpoint turns ready=false from the fault's start until its readiness deadline after " +
			"the fault ends (or during the whole load when no fault is selected). Terminating pods are not counted.",
		Params: []ParamSpec{
			{Name: "fault", Kind: KindList, Doc: "judge only these faults (names or types); default every fault"},
			{Name: "pods", Kind: KindList, Doc: "target pods; default the fault's pods, else every pod ready when it starts"},
		},
		Allowances: []string{oracle.AllowancePropagation},
		Needs:      NeedsFaultEffect | NeedsEndpoints,
		Judge:      judgeReadinessNotWithdrawn,
	})
}

func judgeReadinessNotWithdrawn(in Input) Result {
	faults, skipped := in.selectedFaults()
	if len(faults) == 0 && len(skipped) > 0 {
		return skippedResult(skipped)
	}
	eps := buildEndpoints(in.Entries)
	pods := buildPods(in.Entries)
	var tail = in.Oracle.Propagation
	if in.Oracle.Readiness != nil {
		tail = in.Oracle.Readiness.Detection.Deadline()
	}
	type span struct {
		f        *timeline.FaultWindow
		from, to time.Duration
	}
	var spans []span
	for i := range faults {
		f := &faults[i]
		spans = append(spans, span{f, f.Start, f.End + tail})
	}
	r := Result{Status: Pass}
	if len(spans) == 0 {
		load, ok := in.loadSpan()
		if !ok {
			r.Expected = "every endpoint stays ready during the load"
			r.nothingToJudge("no load and no fault on the timeline: nothing to judge")
			return r
		}
		spans = append(spans, span{nil, load.Start, load.End})
		r.Expected = fmt.Sprintf("every endpoint stays ready from %s to %s (the load)", dur(load.Start), dur(load.End))
	} else {
		r.Expected = fmt.Sprintf("no target endpoint goes ready=false from each fault's start until %s after it ends (readiness deadline)", dur(tail))
	}
	withdrawals := 0
	judged := 0
	for _, s := range spans {
		var targets []string
		if s.f != nil {
			targets = faultTargets(in, *s.f, eps)
		} else if targets = in.Params.List("pods"); len(targets) == 0 {
			targets = eps.ReadyAt(s.from)
		}
		for _, pod := range targets {
			judged++
			name := "load"
			if s.f != nil {
				name = s.f.Type
			}
			r.window("stays ready", pod, s.from, s.to, name)
			from := s.from
			for {
				st, ok := eps.withdrawal(pod, from)
				if !ok || st.T > s.to {
					break
				}
				from = st.T + 1
				if p := pods[pod]; st.Terminating || (p != nil && p.Deleting != nil && p.Deleting.T <= st.T) {
					continue // termination, judged by the termination rules
				}
				withdrawals++
				r.failAt(st.T)
				r.add(atEntry(st.T, st.Seq, "%s's endpoint went ready=false %s into the %s", pod, dur(st.T-s.from), name))
			}
		}
	}
	r.Observed = fmt.Sprintf("%d withdrawals of %d judged endpoints", withdrawals, judged)
	if judged == 0 {
		r.Observed = "no endpoint was ready to judge"
		r.failAt(spans[0].from)
	}
	r.figure("withdrawals", float64(withdrawals))
	return r
}
