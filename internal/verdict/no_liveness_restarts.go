package verdict

import (
	"fmt"

	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "no-liveness-restarts",
		Title: "No container is restarted by its liveness probe",
		Doc:   "Fails on any restart attributed to a liveness kill, on any pod, at any time of the run.",
		Params: []ParamSpec{
			{Name: "pods", Kind: KindList, Doc: "only judge these pods (default: every pod)"},
		},
		Needs: NeedsRestarts,
		Judge: judgeNoLivenessRestarts,
	})
}

func judgeNoLivenessRestarts(in Input) Result {
	only := setOf(in.Params.List("pods"))
	r := Result{Status: Pass, Expected: "0 restarts with cause liveness on any pod"}
	live, other := 0, 0
	for _, e := range in.Entries {
		if e.Kind != timeline.KindRestart || e.Restart == nil || (len(only) > 0 && !only[e.Pod]) {
			continue
		}
		if e.Restart.Cause != timeline.CauseLiveness {
			other++
			continue
		}
		live++
		r.failAt(e.T)
		r.add(atEntry(e.T, e.Seq, "%s container %s restarted (#%d) by liveness: %s", e.Pod, e.Restart.Container, e.Restart.RestartCount, e.Restart.Evidence))
		r.explainRestart(in.Entries, e)
	}
	r.Observed = fmt.Sprintf("%d liveness restarts (%d restarts with other causes)", live, other)
	r.figure("liveness_restarts", float64(live))
	r.measure("liveness restarts", "restarts", AtMost, float64(live), 0)
	r.figure("other_restarts", float64(other))
	return r
}

func setOf(names []string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}
