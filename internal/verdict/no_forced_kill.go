package verdict

import (
	"fmt"
	"strings"
	"time"
)

func init() {
	Register(Rule{
		Name:  "no-forced-kill",
		Title: "No deleted pod exceeds its grace period",
		Doc: "A deleted pod's container must exit by itself within terminationGracePeriodSeconds: exit code 137 " +
			"(SIGKILL) or an exit later than deletion + grace + tolerance is a forced kill. With expected=true the rule " +
			"is inverted: at least one forced kill must be observed (drain-exceeds-grace). An exit known only from the pod's " +
			"deletion (no terminated state seen, such as a relist's tombstone after a watch gap) has no exit code: it is no " +
			"evidence of a clean exit, nor of a forced one, and leaves that pod INCONCLUSIVE. With expected=true an exit never " +
			"observed is not counted as a forced kill: with no forced kill seen the rule is then INCONCLUSIVE, not PASS. " +
			"A watch gap over the load or a fault makes a PASS INCONCLUSIVE. In a pod of several containers the app's " +
			"container is judged (the oracle's: the one whose probes are under test); a sidecar's exit does not stand in for it.",
		Params: []ParamSpec{
			{Name: "expected", Kind: KindBool, Default: "false", Doc: "a forced kill is the expected outcome"},
			{Name: "tolerance", Kind: KindDuration, Default: "1s", Doc: "slack after deletion + grace before an exit counts as forced", Tolerance: true},
			{Name: "pods", Kind: KindList, Doc: "only judge these pods (default: every deleted pod)"},
		},
		Needs: NeedsFaultEffect | NeedsPods,
		Judge: judgeNoForcedKill,
	})
}

func judgeNoForcedKill(in Input) Result {
	expectForced := in.Params.Bool("expected", false)
	tol := in.Params.Duration("tolerance", time.Second)
	r := Result{Status: Pass, Expected: "every deleted pod exits by itself (not exit code 137) within its grace period"}
	if expectForced {
		r.Expected = "at least one deleted pod is force-killed (exit code 137, or exit after its grace period)"
	}
	if _, skipped := in.selectedFaults(); len(skipped) > 0 && len(deletedPods(in)) == 0 {
		return skippedResult(skipped)
	}
	pods := buildPods(in.Entries)
	container := in.container()
	forced, judged := 0, 0
	var observed, unknown []string
	var longest time.Duration
	for _, name := range deletedPods(in) {
		p := pods[name]
		judged++
		grace, src := in.Oracle.Termination.GracePeriod, "pod spec"
		if p.Grace != nil {
			grace, src = *p.Grace, "deletion"
		}
		deadline := p.Deleting.T + grace + tol
		r.window("grace period", name, p.Deleting.T, p.Deleting.T+grace, fmt.Sprintf("grace %s (%s)", dur(grace), src))
		exit, ok := p.exitAfter(p.Deleting.T, container)
		var why, blind string
		switch {
		case !ok && expectForced:
			blind = fmt.Sprintf("%s: its exit was never observed (the run may have stopped watching first): not counted as a forced kill", name)
		case !ok:
			why = "exit never observed"
		case exit.ExitCode != nil && *exit.ExitCode == 137:
			why = fmt.Sprintf("exit code 137 (SIGKILL) %s after deletion", dur(exit.T-p.Deleting.T))
		case exit.Deletion && exit.Recovered:
			blind = fmt.Sprintf("%s: its exit is known only from the relist's tombstone at %s (a pods watch gap): no exit code, and only the relist's time", name, dur(exit.T))
		case exit.Deletion:
			blind = fmt.Sprintf("%s: no container exit was seen, only the pod's deletion at %s: no exit code, so a SIGKILL is not ruled out", name, dur(exit.T))
		case exit.T > deadline:
			why = fmt.Sprintf("exited %s after deletion, past grace %s", dur(exit.T-p.Deleting.T), dur(grace))
		}
		if ok && !exit.Deletion {
			longest = max(longest, exit.T-p.Deleting.T)
			if !expectForced {
				r.measure("exit after deletion", "s", AtMost, secs(exit.T-p.Deleting.T), secs(grace+tol))
			}
		}
		at, seq := deadline, p.Deleting.Seq
		if ok {
			at, seq = exit.T, exit.Seq
		}
		switch {
		case blind != "":
			unknown = append(unknown, blind)
			r.add(atEntry(at, seq, "%s: exit not known", name))
			observed = append(observed, name+": exit not known")
			continue
		case why == "":
			r.add(atEntry(exit.T, exit.Seq, "%s exited (%s) %s after deletion, within grace %s", name, exitWords(exit), dur(exit.T-p.Deleting.T), dur(grace)))
			observed = append(observed, fmt.Sprintf("%s exited after %s", name, dur(exit.T-p.Deleting.T)))
			continue
		}
		forced++
		r.add(atEntry(at, seq, "%s forced: %s", name, why))
		observed = append(observed, name+" forced: "+why)
		if !expectForced {
			r.failAt(at)
		}
	}
	if judged == 0 {
		r.nothingToJudge("no pod was deleted: nothing to judge")
		return r
	}
	// An exit not known is no evidence either way: it leaves a PASS unshown, and with expected=true
	// it matters only while no forced kill was seen.
	if !expectForced || forced == 0 {
		for _, u := range unknown {
			r.unshown(u)
		}
	}
	if expectForced && forced == 0 && len(unknown) == 0 {
		r.failAt(0)
	}
	r.Observed = fmt.Sprintf("%d of %d deleted pods force-killed: %s", forced, judged, strings.Join(observed, "; "))
	r.figure("forced_kills", float64(forced))
	r.figure("deleted_pods", float64(judged))
	r.figure("longest_exit_s", secs(longest))
	return r
}
