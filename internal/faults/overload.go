package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/probegate/probegate/internal/pause"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/loadgen"
)

// LoadMeter is a running load that reports its tally (loadgen.Load implements it). The overload
// fault reads it to prove that the offered rate rose and to record what the target did meanwhile.
type LoadMeter interface {
	Counts() loadgen.Counts
}

// overloadReached is the share of the raised rate the load must actually send for the overload to
// count as applied.
const overloadReached = 0.8

// TypeOverload raises the load above the target's capacity.
const TypeOverload = "overload"

// Overload parameters the runner reads: the multiple of the target's capacity asked for, and the
// capacity it measured.
const (
	ParamCapacityMultiple = "capacity-multiple"
	ParamCapacity         = "capacity"
)

func init() {
	Register(Definition{
		Type: TypeOverload,
		Doc:  "raises the load's rate above the target's capacity for the fault's window",
		Params: []Param{
			{Name: "rate", Kind: KindNumber, Doc: "the raised rate in requests per second (this or " + ParamCapacityMultiple + ")"},
			{Name: ParamCapacityMultiple, Kind: KindNumber, Doc: "raise the load to this multiple of the target's capacity, measured on the " +
				"scenario's own request by a short step search before the load starts, capped below the rate the harness itself " +
				"could not send and at 2000/s (every request is kept and judged); when the harness ran out before the target did and the " +
				"runner reaches the nodes, the target's containers are CPU-capped (cgroup quota, sized from the CPU a request cost) and " +
				"searched again, the cap holding to the scenario's end; the capacity and any cap are in the report"},
			{Name: ParamCapacity, Kind: KindNumber, Doc: "set by the runner from the capacity search (the capacity measured), not by scenarios"},
		},
		Check: func(p map[string]string) error {
			_, r := p["rate"]
			_, m := p[ParamCapacityMultiple]
			if !r && !m {
				return fmt.Errorf("parameter rate or %s is required", ParamCapacityMultiple)
			}
			return nil
		},
		Needs: []Capability{NeedsLoad},
		Proof: fmt.Sprintf("the rate the load actually sent over the first seconds reached %g%% of the raised rate", overloadReached*100),
		Build: func(a Args) (Fault, error) {
			v, _ := a.Param("rate")
			rate, _ := strconv.ParseFloat(v, 64)
			f := NewOverload(a.Rec, rate)
			f.For = a.Spec.Duration
			if a.Env.Load != nil {
				f.SetLoad(a.Env.Load)
			}
			return f, nil
		},
	})
}

// Overload raises the load's rate above the target's capacity for the fault's window, through the
// load generator's rate hook, and puts the previous rate back on revert. Proof of effect: the rate
// the load actually sent over the first seconds after the raise (ObserveFor) reached at least
// overloadReached of the raised rate, read from the load's tally (LoadMeter); the same tally gives
// what the target did meanwhile (completed requests, success ratio, mean latency).
type Overload struct {
	Recorder
	state
	Rate float64
	// For is the fault's duration (0: unknown); the proof's window is at most half of it.
	For time.Duration
	// ObserveFor is how long after the raise the sent rate is measured (3s when 0).
	ObserveFor time.Duration

	mu   sync.Mutex
	load RateSetter
	prev float64
}

// NewOverload returns the overload fault; give it the running load with SetLoad before Inject.
func NewOverload(rec Recorder, rate float64) *Overload {
	rec.Type = TypeOverload
	return &Overload{Recorder: rec, Rate: rate}
}

// Type implements Fault.
func (f *Overload) Type() string { return TypeOverload }

// SetLoad gives the fault the running load.
func (f *Overload) SetLoad(l RateSetter) {
	f.mu.Lock()
	f.load = l
	f.mu.Unlock()
}

func (f *Overload) loadSetter() RateSetter {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.load
}

// Inject raises the rate, then measures what the load sent over the proof's window.
func (f *Overload) Inject(ctx context.Context) error {
	if !f.begin(true) {
		f.end(true)
		return nil
	}
	l := f.loadSetter()
	if l == nil {
		f.end(false)
		return errors.New("overload: no running load to raise")
	}
	meter, _ := l.(LoadMeter)
	var before loadgen.Counts
	if meter != nil {
		before = meter.Counts()
	}
	start := time.Now()
	f.prev = l.SetRate(f.Rate)
	f.record(timeline.FaultInject, "load", "", fmt.Sprintf("load raised from %g/s to %g/s", f.prev, f.Rate),
		map[string]string{"rate": rate(f.Rate), "previous": rate(f.prev)})
	f.end(true)

	if meter == nil {
		f.proof("load", "", timeline.PhaseDuring, false, "the load reports no tally: the rate it sent was not measured", nil)
		return nil
	}
	window := f.ObserveFor
	if window <= 0 {
		window = 3 * time.Second
	}
	if f.For > 0 {
		window = min(window, f.For/2)
	}
	cancelled := pause.For(ctx, window) != nil
	f.observe(before, meter.Counts(), time.Since(start), cancelled)
	return nil
}

// observe records the proof from two tallies taken elapsed apart.
func (f *Overload) observe(before, after loadgen.Counts, elapsed time.Duration, cancelled bool) {
	sent := after.Sent - before.Sent
	achieved := float64(sent) / elapsed.Seconds()
	params := map[string]string{
		"rate": rate(f.Rate), "previous": rate(f.prev), "window_ms": ms(elapsed),
		"sent": fmt.Sprint(sent), "achieved_rps": strconv.FormatFloat(achieved, 'f', 1, 64),
	}
	detail := fmt.Sprintf("sent %d requests in %s after the raise: %.1f/s (asked %g/s, was %g/s)",
		sent, elapsed.Round(time.Millisecond), achieved, f.Rate, f.prev)
	ok := achieved >= overloadReached*f.Rate
	switch {
	case f.Rate <= f.prev:
		ok = false
		detail += ": the rate was not raised"
	case cancelled && elapsed < 500*time.Millisecond:
		ok = false
		detail += fmt.Sprintf(": cancelled after %s, too short to measure", elapsed.Round(time.Millisecond))
	case !ok:
		detail += fmt.Sprintf(": below %.0f%% of the raised rate", overloadReached*100)
	}
	if cancelled {
		detail += " (the run ended within the window)"
	}
	// What the target did with the requests that completed meanwhile (started before or after).
	done, good := after.Completed-before.Completed, after.OK-before.OK
	params["completed"], params["ok"] = fmt.Sprint(done), fmt.Sprint(good)
	if done > 0 {
		ratio := float64(good) / float64(done)
		mean := (after.Latency - before.Latency) / time.Duration(done)
		params["success_ratio"] = strconv.FormatFloat(ratio, 'f', 3, 64)
		params["mean_latency_ms"] = ms(mean)
		detail += fmt.Sprintf("; target: %d of %d completed requests OK (%.1f%%), mean latency %s",
			good, done, 100*ratio, mean.Round(time.Millisecond))
	} else {
		detail += "; target: no request completed in the window"
	}
	f.proof("load", "", timeline.PhaseDuring, ok, detail, params)
}

// Revert puts the previous rate back.
func (f *Overload) Revert(context.Context) error {
	if !f.begin(false) {
		f.end(false)
		return nil
	}
	l := f.loadSetter()
	l.SetRate(f.prev)
	f.record(timeline.FaultRevert, "load", "", fmt.Sprintf("load back to %g/s", f.prev),
		map[string]string{"rate": rate(f.prev)})
	f.end(false)
	return nil
}

func rate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }
