package faults

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/loadgen"
)

// fakeLoad is a load with a rate hook and no tally.
type fakeLoad struct {
	mu   sync.Mutex
	rate float64
}

func (l *fakeLoad) SetRate(r float64) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev := l.rate
	l.rate = r
	return prev
}

// meteredLoad is a load whose tally follows its rate: after a SetRate it sends share of the new
// rate; 90% of what completes is OK, each request takes 50 ms, and 20 are always in flight.
type meteredLoad struct {
	fakeLoad
	share    float64
	raisedAt time.Time
}

func (l *meteredLoad) SetRate(r float64) float64 {
	l.mu.Lock()
	l.raisedAt = time.Now()
	l.mu.Unlock()
	return l.fakeLoad.SetRate(r)
}

func (l *meteredLoad) Counts() loadgen.Counts {
	l.mu.Lock()
	defer l.mu.Unlock()
	sent := uint64(1000)
	if !l.raisedAt.IsZero() {
		sent += uint64(l.rate * l.share * time.Since(l.raisedAt).Seconds())
	}
	done := sent - 20
	return loadgen.Counts{Sent: sent, Completed: done, OK: done * 9 / 10, Latency: time.Duration(done) * 50 * time.Millisecond}
}

func faultActions(tl *timeline.Timeline) []*timeline.FaultAction {
	var out []*timeline.FaultAction
	for _, e := range tl.Filter(timeline.KindFault) {
		out = append(out, e.Fault)
	}
	return out
}

func TestOverloadRaisesAndRestoresTheRate(t *testing.T) {
	tl := timeline.New(time.Now())
	f := NewOverload(Recorder{Timeline: tl}, 400)
	if err := f.Inject(context.Background()); err == nil {
		t.Fatal("overload without a load was accepted")
	}
	l := &fakeLoad{rate: 100}
	f.SetLoad(l)
	if err := f.Inject(context.Background()); err != nil || l.rate != 400 {
		t.Fatalf("inject: %v, rate %g", err, l.rate)
	}
	if err := f.Inject(context.Background()); err != nil || l.rate != 400 {
		t.Fatalf("second inject: %v, rate %g", err, l.rate)
	}
	if err := f.Revert(context.Background()); err != nil || l.rate != 100 {
		t.Fatalf("revert: %v, rate %g", err, l.rate)
	}
	acts := faultActions(tl)
	if len(acts) != 3 || acts[0].Params["rate"] != "400" || acts[0].Params["previous"] != "100" || acts[2].Action != timeline.FaultRevert {
		t.Fatalf("timeline = %+v", acts)
	}
	// A load without a tally cannot prove the raise: said so, not assumed.
	if a := acts[1]; a.Action != timeline.FaultObserve || a.Params[timeline.ParamEffect] != timeline.EffectNotObserved ||
		!strings.Contains(a.Detail, "not measured") {
		t.Fatalf("observe without a tally = %+v", a)
	}
}

// overloadProof injects an overload from 100/s to rate on a load that sends share of what it is
// asked, and returns the observe action.
func overloadProof(t *testing.T, rate, share float64, f func(*Overload)) *timeline.FaultAction {
	t.Helper()
	tl := timeline.New(time.Now())
	o := NewOverload(Recorder{Timeline: tl, Name: "faults[0]"}, rate)
	o.ObserveFor = 300 * time.Millisecond
	if f != nil {
		f(o)
	}
	o.SetLoad(&meteredLoad{fakeLoad: fakeLoad{rate: 100}, share: share})
	if err := o.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	acts := faultActions(tl)
	if len(acts) != 2 || acts[0].Action != timeline.FaultInject || acts[1].Action != timeline.FaultObserve {
		t.Fatalf("actions = %+v", acts)
	}
	a := acts[1]
	if a.Params[timeline.ParamPhase] != timeline.PhaseDuring {
		t.Fatalf("observe phase = %q", a.Params[timeline.ParamPhase])
	}
	t.Logf("%s %v", a.Detail, a.Params)
	return a
}

func TestOverloadProvesTheSentRateAndWhatTheTargetDid(t *testing.T) {
	a := overloadProof(t, 400, 1, nil)
	if a.Params[timeline.ParamEffect] != timeline.EffectConfirmed {
		t.Fatalf("effect = %q: %s", a.Params[timeline.ParamEffect], a.Detail)
	}
	achieved, err := strconv.ParseFloat(a.Params["achieved_rps"], 64)
	if err != nil || achieved < 320 || achieved > 410 {
		t.Fatalf("achieved_rps = %q, want about 400", a.Params["achieved_rps"])
	}
	if r, err := strconv.ParseFloat(a.Params["success_ratio"], 64); err != nil || r < 0.85 || r > 0.95 {
		t.Fatalf("success_ratio = %q, want about 0.9", a.Params["success_ratio"])
	}
	if a.Params["mean_latency_ms"] != "50" || a.Params["rate"] != "400" || a.Params["previous"] != "100" {
		t.Fatalf("params = %v", a.Params)
	}
	for _, want := range []string{"/s (asked 400/s, was 100/s)", "completed requests OK (", "mean latency 50ms"} {
		if !strings.Contains(a.Detail, want) {
			t.Fatalf("detail %q lacks %q", a.Detail, want)
		}
	}
}

func TestOverloadNotReachedIsNotObserved(t *testing.T) {
	// The load sends only half the raised rate (e.g. out of workers): the overload did not happen.
	a := overloadProof(t, 400, 0.5, nil)
	if a.Params[timeline.ParamEffect] != timeline.EffectNotObserved || !strings.Contains(a.Detail, "below 80% of the raised rate") {
		t.Fatalf("observe = %s %v", a.Detail, a.Params)
	}
	// A "raise" to a lower rate is no overload, however well it is sent.
	a = overloadProof(t, 50, 1, nil)
	if a.Params[timeline.ParamEffect] != timeline.EffectNotObserved || !strings.Contains(a.Detail, "not raised") {
		t.Fatalf("observe = %s %v", a.Detail, a.Params)
	}
}

func TestOverloadWindowIsAtMostHalfTheFault(t *testing.T) {
	a := overloadProof(t, 400, 1, func(o *Overload) { o.ObserveFor = 0; o.For = 400 * time.Millisecond })
	if w, _ := strconv.Atoi(a.Params["window_ms"]); w < 200 || w > 1000 {
		t.Fatalf("window_ms = %q, want about 200 (half of the 400ms fault)", a.Params["window_ms"])
	}
}

func TestOverloadCancelledAtOnceIsNotObserved(t *testing.T) {
	tl := timeline.New(time.Now())
	o := NewOverload(Recorder{Timeline: tl}, 400)
	o.SetLoad(&meteredLoad{fakeLoad: fakeLoad{rate: 100}, share: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := o.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	acts := faultActions(tl)
	if len(acts) != 2 || acts[1].Params[timeline.ParamEffect] != timeline.EffectNotObserved || !strings.Contains(acts[1].Detail, "too short") {
		t.Fatalf("actions = %+v", acts)
	}
}
