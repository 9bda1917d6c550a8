package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// Overload raises the load's rate above the target's capacity for the fault's window, through the
// load generator's rate hook, and puts the previous rate back on revert. Proof of effect: the load's
// per-second windows on the same timeline.
type Overload struct {
	Recorder
	state
	Rate float64

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

// Inject raises the rate.
func (f *Overload) Inject(context.Context) error {
	if !f.begin(true) {
		f.end(true)
		return nil
	}
	l := f.loadSetter()
	if l == nil {
		f.end(false)
		return errors.New("overload: no running load to raise")
	}
	f.prev = l.SetRate(f.Rate)
	f.record("inject", "load", "", fmt.Sprintf("load raised from %g/s to %g/s", f.prev, f.Rate),
		map[string]string{"rate": strconv.FormatFloat(f.Rate, 'f', -1, 64), "previous": strconv.FormatFloat(f.prev, 'f', -1, 64)})
	f.end(true)
	return nil
}

// Revert puts the previous rate back.
func (f *Overload) Revert(context.Context) error {
	if !f.begin(false) {
		f.end(false)
		return nil
	}
	l := f.loadSetter()
	l.SetRate(f.prev)
	f.record("revert", "load", "", fmt.Sprintf("load back to %g/s", f.prev),
		map[string]string{"rate": strconv.FormatFloat(f.prev, 'f', -1, 64)})
	f.end(false)
	return nil
}
