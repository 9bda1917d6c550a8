package verdict

import (
	"fmt"
	"slices"

	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "no-unexpected-restarts",
		Title: "Every container restart is one the scenario's faults explain",
		Doc: "Fails on any restart no fault of the scenario explains: a crash (app-exit), an OOM kill and a startup kill " +
			"always; a liveness kill unless a freeze or stall acted on that pod, from its start until its end + the oracle's " +
			"liveness restart deadline, and only one per fault and pod (a restart loop after the fault is not the fault's); " +
			"a deletion unless a pod-delete, evict or node-drain fault named that pod at most its grace period earlier, or " +
			"a rolling-update or cold-start began after the pod was created; an eviction likewise by evict or node-drain. " +
			"Judged in every scenario, listed or not.",
		Params: []ParamSpec{
			{Name: "pods", Kind: KindList, Doc: "only judge these pods (default: every pod)"},
		},
		Needs:   NeedsRestarts,
		Default: true,
		Judge:   judgeNoUnexpectedRestarts,
	})
}

// Fault types that explain a restart, by the restart's cause: each fault registered for the cause
// (faults.Definition.Explains), and for a deletion also those registered for an eviction (an evicted
// pod is deleted; when the Evicted evidence is missed, its end is observed as a deletion). The
// runner's TestRestartExplainersAgree keeps this equal to the registry, both ways. Which fault
// explains a given restart (pod, time and count bounds) is restartExplainer's business.
var explainers = map[timeline.RestartCause][]string{
	timeline.CauseLiveness: {"freeze", "stall"},
	timeline.CauseDeletion: {"pod-delete", "rolling-update", "cold-start", "evict", "node-drain"},
	timeline.CauseEviction: {"evict", "node-drain"},
}

// Explainers returns, by restart cause, the fault types that explain a restart (a copy). The fault
// registry states the same per fault type (faults.Definition.Explains); a test in the runner, which
// sees both, keeps them equal.
func Explainers() map[timeline.RestartCause][]string {
	out := make(map[timeline.RestartCause][]string, len(explainers))
	for c, types := range explainers {
		out[c] = slices.Clone(types)
	}
	return out
}

func judgeNoUnexpectedRestarts(in Input) Result {
	only := setOf(in.Params.List("pods"))
	r := Result{Status: Pass, Expected: "0 restarts that no fault of the scenario explains"}
	x := newRestartExplainer(in)
	unexpected, explained := 0, 0
	for _, e := range in.Entries {
		if e.Kind != timeline.KindRestart || e.Restart == nil || (len(only) > 0 && !only[e.Pod]) {
			continue
		}
		if f, ok := x.explain(e); ok {
			explained++
			r.add(atEntry(e.T, e.Seq, "%s restarted (%s): explained by %s injected at %s", e.Pod, e.Restart.Cause, f.Type, dur(f.Start)))
			continue
		}
		if e.Restart.Cause == timeline.CauseUnknown {
			continue // Needs makes the verdict INCONCLUSIVE: the cause may or may not be explained
		}
		unexpected++
		r.failAt(e.T)
		r.add(atEntry(e.T, e.Seq, "%s container %s restarted (#%d), cause %s, that no fault explains: %s",
			e.Pod, e.Restart.Container, e.Restart.RestartCount, e.Restart.Cause, e.Restart.Evidence))
	}
	r.Observed = fmt.Sprintf("%d unexpected restarts (%d explained by the scenario's faults)", unexpected, explained)
	r.figure("unexpected_restarts", float64(unexpected))
	r.measure("unexpected restarts", "restarts", AtMost, float64(unexpected), 0)
	r.figure("explained_restarts", float64(explained))
	return r
}
