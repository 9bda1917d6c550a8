package lint

import (
	"fmt"
	"time"
)

func init() {
	register(&Rule{
		ID:       "PG002",
		Name:     "liveness-before-readiness",
		Severity: Warning,
		Summary:  "liveness can restart a container before readiness has withdrawn it",
		Explanation: "After a fault starts, a probe reacts within its detection window [(F−1)·P, F·P + timeout]; " +
			"a readiness failure then takes another moment to propagate from the kubelet through the " +
			"EndpointSlice to kube-proxy. When the liveness window opens before the readiness window " +
			"(plus propagation) closes, a stalled instance can be killed while it is still in the Service: " +
			"its in-flight and newly routed requests fail, instead of traffic moving away first and the " +
			"restart happening only if the instance does not recover. The finding is info when every route to the " +
			"container carries long-lived connections (named as for PG009): a withdrawal moves none of them, so " +
			"ordering liveness after readiness would spare only the new connections of the window. It is info, " +
			"too, when only headless Services route to the container (as for PG009): a withdrawal changes only " +
			"what new DNS lookups return, not where clients already connected send." + noServiceText,
		Fix: "Make liveness react later than readiness: a longer periodSeconds and/or higher failureThreshold on " +
			"liveness so that (F−1)·P of liveness exceeds F·P + timeout of readiness plus propagation (2 s by " +
			"default) and any declared readiness lag (" + AnnotationReadinessLag + ").",
		// short-freeze holds a freeze exactly until this pod's readiness has withdrawn it at worst:
		// a stall readiness rides out, on any app (no cooperation needed), so a liveness restart
		// there is this finding shown.
		Scenario: "short-freeze",
		Predicts: []string{"no-liveness-restarts"},
		Check:    checkLivenessBeforeReadiness,
	})
}

// shortFreezeMargin is scenarios/short-freeze.yaml's margin after the readiness withdrawal.
const shortFreezeMargin = 2 * time.Second

func checkLivenessBeforeReadiness(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG002")
	prop := ctx.propagation(w)
	lag, hasLag, _ := declared(w, AnnotationReadinessLag)
	var out []Finding
	for _, c := range w.Containers() {
		if c.LivenessProbe == nil || c.ReadinessProbe == nil {
			continue
		}
		routes := servedRoutes(ctx, w, c)
		if len(routes) == 0 {
			continue // readiness moves no traffic: nothing to withdraw before a restart
		}
		lw := timingOf(c.LivenessProbe).DetectionWindow()
		rw := timingOf(c.ReadinessProbe).DetectionWindow()
		withdrawn := rw.Latest + lag + prop
		if lw.Earliest >= withdrawn {
			continue
		}
		extra := "+" + fmtDur(prop) + " propagation"
		if hasLag {
			extra = "+" + fmtDur(lag) + " app lag " + extra
		}
		lt := timingOf(c.LivenessProbe)
		f := r.finding(ctx, w, w.AtContainer(c, Liveness.field()), c.Name,
			"container %q: liveness can fire %s after a stall starts, before readiness has withdrawn it (at worst %s %s = %s): liveness window %s, readiness window %s",
			c.Name, fmtDur(lw.Earliest), fmtDur(rw.Latest), extra, fmtDur(withdrawn), lw, rw)
		if onlyHeadless(routes) {
			f.Severity = Info
			f.Message += "; but " + headlessNote(routes[0])
		} else if rt, proto, ok := requestRoute(c, routes); !ok {
			f.Severity = Info
			f.Message += fmt.Sprintf("; %s carries %s, long-lived connections that a withdrawal does not move: withdrawing first would spare only the new connections of the window", rt, proto)
		}
		// short-freeze holds its freeze until readiness's worst withdrawal plus its 2 s margin: a
		// liveness that may fire only after the thaw can pass one run by the probes' phase alone.
		if hold := withdrawn + shortFreezeMargin; lw.Latest > hold {
			f.PassShowsLittle = fmt.Sprintf("short-freeze thaws the pod after %s (the readiness withdrawal %s + %s), and liveness may first fire as late as %s, so a run without a restart can be the probes' phase",
				fmtDur(hold), fmtDur(withdrawn), fmtDur(shortFreezeMargin), fmtDur(lw.Latest))
		}
		f.Message += noServiceNote(ctx, w)
		f.Probe = string(Liveness)
		f.Fix = fmt.Sprintf("set liveness failureThreshold ≥ %d (now %d) at periodSeconds %d, so (F−1)·P is at least the %s readiness withdrawal",
			failureThresholdAbove(lt.Period, withdrawn), lt.Failure, seconds32(lt.Period), fmtDur(withdrawn))
		out = append(out, f)
	}
	return out
}
