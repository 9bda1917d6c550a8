package faults

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/pause"
)

// rolloutObserveTimeout bounds how long a rollout fault waits to see its rollout start.
var rolloutObserveTimeout = 10 * time.Second

// observeRollout waits (up to rolloutObserveTimeout) until w's controller has seen generation and
// records what it reports: the proof that a rollout started. phase is the proof's ParamPhase (""
// for a one-shot fault). A workload whose template change rolls no pod by itself (a StatefulSet
// with OnDelete) has no proof: nothing was shown.
func observeRollout(ctx context.Context, rec Recorder, w Workload, generation int64, phase string) {
	p, err := waitObserved(ctx, w, generation)
	name := w.Name()
	what := strings.ToLower(w.Kind()) + " " + name
	params := map[string]string{"generation": fmt.Sprint(generation), "workload": w.Kind() + "/" + name}
	if err != nil {
		params["error"] = err.Error()
		rec.proof(name, "", phase, false, fmt.Sprintf("%s: %v", what, err), params)
		return
	}
	if p.ObservedGeneration < generation {
		rec.proof(name, "", phase, false, fmt.Sprintf("%s: generation %d not observed by the controller within %s (observed %d)",
			what, generation, rolloutObserveTimeout, p.ObservedGeneration), params)
		return
	}
	params["updated"] = fmt.Sprint(p.Updated)
	params["ready"] = fmt.Sprint(p.Ready)
	if p.Rolls != "" {
		params["rolls"] = p.Rolls
		rec.proof(name, "", phase, false, fmt.Sprintf("%s: generation %d observed, but %s", what, generation, p.Rolls), params)
		return
	}
	rec.proof(name, "", phase, true, fmt.Sprintf("rollout of %s generation %d under way: %d updated, %d ready of %d",
		what, generation, p.Updated, p.Ready, p.Replicas), params)
}

// waitObserved polls w (up to rolloutObserveTimeout) until its controller has observed
// generation, and returns the last progress read; the error is the last read's.
func waitObserved(ctx context.Context, w Workload, generation int64) (Progress, error) {
	ctx, cancel := context.WithTimeout(ctx, rolloutObserveTimeout)
	defer cancel()
	for {
		p, err := w.Progress(ctx)
		if err == nil && p.ObservedGeneration >= generation {
			return p, nil
		}
		if pause.For(ctx, 200*time.Millisecond) != nil {
			return p, err
		}
	}
}
