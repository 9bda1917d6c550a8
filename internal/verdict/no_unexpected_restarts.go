package verdict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "no-unexpected-restarts",
		Title: "Every container restart is one the scenario's faults explain",
		Doc: "Fails on any restart no fault of the scenario explains: a crash (app-exit), an OOM kill and a startup kill " +
			"always; a liveness kill unless a freeze or stall acted on that pod before it; a deletion or eviction unless a " +
			"pod-delete, evict, rolling-update or cold-start fault (or, for an eviction, a node-drain) acted before it. Judged in every scenario, listed or not.",
		Params: []ParamSpec{
			{Name: "pods", Kind: KindList, Doc: "only judge these pods (default: every pod)"},
		},
		Needs:   NeedsRestarts,
		Default: true,
		Judge:   judgeNoUnexpectedRestarts,
	})
}

// Fault types that explain a restart, by the restart's cause.
var explainers = map[timeline.RestartCause][]string{
	timeline.CauseLiveness: {"freeze", "stall"},
	timeline.CauseDeletion: {"pod-delete", "evict", "rolling-update", "cold-start"},
	timeline.CauseEviction: {"pod-delete", "evict", "rolling-update", "cold-start", "node-drain"},
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
	faults := in.faults()
	unexpected, explained := 0, 0
	for _, e := range in.Entries {
		if e.Kind != timeline.KindRestart || e.Restart == nil || (len(only) > 0 && !only[e.Pod]) {
			continue
		}
		if f, ok := explainingFault(e, faults); ok {
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
	r.figure("explained_restarts", float64(explained))
	return r
}

// explainingFault returns the fault that explains restart e: one of the types that explain its
// cause, that acted (not skipped), started before it and, when it names pods, named e's pod.
func explainingFault(e timeline.Entry, faults []timeline.FaultWindow) (timeline.FaultWindow, bool) {
	types := explainers[e.Restart.Cause]
	for _, f := range faults {
		if f.Skipped || f.Start > e.T || !slices.Contains(types, f.Type) {
			continue
		}
		if e.Restart.Cause == timeline.CauseLiveness && len(f.Pods) > 0 && !slices.ContainsFunc(f.Pods, func(p string) bool {
			return strings.EqualFold(p, e.Pod)
		}) {
			continue
		}
		return f, true
	}
	return timeline.FaultWindow{}, false
}
