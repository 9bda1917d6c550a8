package verdict

import (
	"fmt"
	"math"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "startup-not-killed",
		Title: "No container is killed during bootstrap",
		Doc: "No restart with cause startup, and no restart with cause liveness of a container incarnation that never " +
			"became ready (from creation or the previous restart). At least one pod must be seen becoming ready.",
		Params: []ParamSpec{
			{Name: "pods", Kind: KindList, Doc: "only judge these pods (default: every pod)"},
		},
		Needs: NeedsRestarts,
		Judge: judgeStartupNotKilled,
	})
}

func judgeStartupNotKilled(in Input) Result {
	only := setOf(in.Params.List("pods"))
	r := Result{Status: Pass, Expected: fmt.Sprintf("no startup or liveness kill before a container is first ready (%s)", in.Oracle.Startup.Explain)}
	pods := buildPods(in.Entries)
	kills, booted := 0, 0
	var slowest float64
	var readyEvidence []Evidence
	for _, name := range sortedPodNames(pods) {
		if len(only) > 0 && !only[name] {
			continue
		}
		p := pods[name]
		if p.FirstReady != nil {
			booted++
			if p.Created != nil {
				slowest = max(slowest, secs(p.FirstReady.T-p.Created.T))
			}
		}
		// Each incarnation bootstraps from the pod's creation or the previous restart until its
		// first ready=true; a liveness kill in that span is a bootstrap kill.
		prev := time.Duration(math.MinInt64)
		for _, e := range p.Restarts {
			cause := e.Restart.Cause
			bootstrap := !p.readyBetween(prev, e.T)
			prev = e.T
			if cause == timeline.CauseStartup || (cause == timeline.CauseLiveness && bootstrap) {
				kills++
				r.failAt(e.T)
				state := "before it was ready"
				if !bootstrap {
					state = "after it had been ready"
				}
				r.add(atEntry(e.T, e.Seq, "%s container %s (restart #%d) killed by %s %s: %s", name, e.Restart.Container, e.Restart.RestartCount, cause, state, e.Restart.Evidence))
			}
		}
		if p.FirstReady != nil {
			readyEvidence = append(readyEvidence, atEntry(p.FirstReady.T, p.FirstReady.Seq, "%s first ready", name))
		}
	}
	for _, ev := range readyEvidence {
		r.add(ev)
	}
	if booted == 0 {
		r.failAt(0)
		r.Observed = fmt.Sprintf("%d bootstrap kills; no pod was seen becoming ready", kills)
	} else {
		r.Observed = fmt.Sprintf("%d bootstrap kills; %d pods became ready (slowest %.1fs from creation, budget %s)", kills, booted, slowest, dur(in.Oracle.Startup.Budget))
	}
	r.figure("bootstrap_kills", float64(kills))
	r.figure("pods_ready", float64(booted))
	r.figure("slowest_bootstrap_s", slowest)
	return r
}
