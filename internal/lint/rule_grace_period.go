package lint

import "fmt"

func init() {
	register(&Rule{
		ID:       "PG008",
		Name:     "grace-period-too-short",
		Severity: Error,
		Summary:  "terminationGracePeriodSeconds does not cover withdrawal + drain + cleanup + margin",
		Explanation: "The grace period is one clock for the whole shutdown: it starts when the pod is " +
			"deleted, runs through the preStop hook, and then through the application's own withdrawal, " +
			"drain and cleanup after SIGTERM. When withdrawal delay (preStop sleep or " + AnnotationWithdrawal +
			") + declared drain (" + AnnotationDrain + ") + cleanup (" + AnnotationCleanup + ") + a margin does " +
			"not fit, the kubelet sends SIGKILL mid-drain: in-flight requests are cut, connections reset, and " +
			"cleanup (closing pools, flushing telemetry) never runs.",
		Fix: "Set terminationGracePeriodSeconds ≥ withdrawal + drain + cleanup + margin, or shorten the preStop " +
			"sleep and bound the drain in the application.",
		Scenario: "drain-exceeds-grace",
		Predicts: []string{"no-forced-kill"},
		Check:    checkGracePeriod,
	})
}

func checkGracePeriod(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG008")
	drain, hasDrain, _ := declared(w, AnnotationDrain)
	cleanup, hasCleanup, _ := declared(w, AnnotationCleanup)
	annWithdrawal, hasWithdrawal, _ := declared(w, AnnotationWithdrawal)
	grace := gracePeriod(&w.Pod)
	var out []Finding
	for _, c := range w.Containers() {
		withdrawal, hasPreStop, known := preStopDelay(c)
		source := "preStop"
		if hasWithdrawal {
			withdrawal, source = annWithdrawal, "withdrawal"
		} else if hasPreStop && !known {
			hasPreStop = false // a hook whose duration lint cannot read says nothing about the need
		}
		if !hasPreStop && !hasWithdrawal && !hasDrain && !hasCleanup {
			continue // nothing declared to compare the grace period with
		}
		need := withdrawal + drain + cleanup + ctx.Config.GraceMargin
		if grace >= need {
			continue
		}
		pos := w.At("terminationGracePeriodSeconds")
		if w.Pod.TerminationGracePeriodSeconds == nil {
			pos = w.AtContainer(c, "lifecycle")
		}
		sum := fmt.Sprintf("%s %s + drain %s", source, fmtDur(withdrawal), fmtDur(drain))
		if hasCleanup {
			sum += " + cleanup " + fmtDur(cleanup)
		}
		f := r.finding(ctx, w, pos, c.Name,
			"container %q: terminationGracePeriodSeconds %s < %s + margin %s = %s: SIGKILL lands mid-drain",
			c.Name, fmtDur(grace), sum, fmtDur(ctx.Config.GraceMargin), fmtDur(need))
		f.Fix = fmt.Sprintf("set terminationGracePeriodSeconds ≥ %d (%s), or shorten the %s and bound the drain in the application",
			seconds32(need), sum+" + margin "+fmtDur(ctx.Config.GraceMargin), source)
		out = append(out, f)
	}
	return out
}
