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
			"is inverted: at least one forced kill must be observed (drain-exceeds-grace).",
		Params: []ParamSpec{
			{Name: "expected", Kind: KindBool, Default: "false", Doc: "a forced kill is the expected outcome"},
			{Name: "tolerance", Kind: KindDuration, Default: "1s", Doc: "slack after deletion + grace before an exit counts as forced", Tolerance: true},
			{Name: "pods", Kind: KindList, Doc: "only judge these pods (default: every deleted pod)"},
		},
		Needs: NeedsFaultEffect,
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
	forced, judged := 0, 0
	var observed []string
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
		exit, ok := p.exitAfter(p.Deleting.T)
		var why string
		switch {
		case !ok:
			why = "exit never observed"
		case exit.ExitCode != nil && *exit.ExitCode == 137:
			why = fmt.Sprintf("exit code 137 (SIGKILL) %s after deletion", dur(exit.T-p.Deleting.T))
		case exit.T > deadline:
			why = fmt.Sprintf("exited %s after deletion, past grace %s", dur(exit.T-p.Deleting.T), dur(grace))
		}
		if ok {
			longest = max(longest, exit.T-p.Deleting.T)
			if !expectForced {
				r.measure("exit after deletion", "s", AtMost, secs(exit.T-p.Deleting.T), secs(grace+tol))
			}
		}
		if why == "" {
			r.add(atEntry(exit.T, exit.Seq, "%s exited (%s) %s after deletion, within grace %s", name, exitWords(exit), dur(exit.T-p.Deleting.T), dur(grace)))
			observed = append(observed, fmt.Sprintf("%s exited after %s", name, dur(exit.T-p.Deleting.T)))
			continue
		}
		forced++
		at, seq := deadline, p.Deleting.Seq
		if ok {
			at, seq = exit.T, exit.Seq
		}
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
	if expectForced && forced == 0 {
		r.failAt(0)
	}
	r.Observed = fmt.Sprintf("%d of %d deleted pods force-killed: %s", forced, judged, strings.Join(observed, "; "))
	r.figure("forced_kills", float64(forced))
	r.figure("deleted_pods", float64(judged))
	r.figure("longest_exit_s", secs(longest))
	return r
}
