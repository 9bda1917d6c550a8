// Package maxrate finds the highest request rate a load generator holds at fidelity: it steps the
// rate up a ladder, then bisects between the last rate held and the first one missed, each step a
// short constant-rate run, within a bounded total time.
//
// Fidelity of a step run at rate r for d, with its requests split evenly over n pacers (one for the
// host load and for bare vegeta, one per agent for in-cluster load), is
//
//	fidelity = good / planned
//
// where planned = n · ⌈(r/n)·d⌉ is how many requests the schedule asked for, and a request is good
// when it was both
//
//   - on time: sent no more than MaxLag after its scheduled instant; and
//   - answered successfully: recorded with a 2xx or 3xx status and no error, within the request
//     timeout the step ran with (a slower answer is recorded as a timeout).
//
// Requests never sent or never recorded count as not good. The scheduled instant of a pacer's
// i-th request (by send time, which is the order vegeta numbers them in) is origin + i/(r/n); a
// pacer never sends early, so origin is taken as the earliest of start_i − i/(r/n) over its
// requests: lag is measured from the schedule the pacer actually kept at its most punctual,
// which makes agents' clock offsets and a pacer's fixed start delay cancel out.
package maxrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// DefaultMaxLag is how late a request may be sent and still count as on time.
const DefaultMaxLag = 100 * time.Millisecond

// DefaultThreshold is the fidelity a step must reach for its rate to be held.
const DefaultThreshold = 0.99

// Record is what fidelity reads of one request.
type Record struct {
	// Source names the pacer that sent it (an agent); "" when there is one.
	Source string
	// Start is when it was sent. Only differences within a source matter.
	Start time.Time
	// OK is true when it was answered successfully within the request timeout.
	OK bool
}

// Step is one constant-rate run and what it achieved.
type Step struct {
	Rate     float64       `json:"rate"`
	Duration time.Duration `json:"duration"`
	Planned  int           `json:"planned"`
	Recorded int           `json:"recorded"`
	OnTime   int           `json:"onTime"` // sent within MaxLag of schedule
	OK       int           `json:"ok"`     // answered successfully
	Good     int           `json:"good"`   // both
	Fidelity float64       `json:"fidelity"`
	// Lag99 and LagMax are the 99th percentile and the largest send lag.
	Lag99  time.Duration `json:"lag99"`
	LagMax time.Duration `json:"lagMax"`
	// Held is Fidelity ≥ the search's threshold (set by Search).
	Held bool `json:"held"`
	// Took is the wall time of the whole step, setup and drain included, Waited excluded (set by
	// Search).
	Took time.Duration `json:"took"`
	// Waited is how long the measure waited before it began (for a quiet machine, say); it counts
	// neither in the step's cost nor against the budget.
	Waited time.Duration `json:"waited,omitempty"`
	// Note carries what the measure wants logged beside the step (CPU, errors that did not stop it).
	Note string `json:"note,omitempty"`
}

func (s Step) String() string {
	str := fmt.Sprintf("%g rps for %s: fidelity %.4f (%d good of %d planned; %d recorded, %d on time, %d ok; lag p99 %s max %s) in %s",
		s.Rate, s.Duration, s.Fidelity, s.Good, s.Planned, s.Recorded, s.OnTime, s.OK,
		s.Lag99.Round(time.Millisecond), s.LagMax.Round(time.Millisecond), s.Took.Round(100*time.Millisecond))
	if s.Waited > 0 {
		str += fmt.Sprintf(" after waiting %s", s.Waited.Round(100*time.Millisecond))
	}
	if s.Note != "" {
		str += "; " + s.Note
	}
	return str
}

// Fidelity scores the records of a run at rate (in total) for d from sources pacers sharing the
// rate evenly, against maxLag (see the package doc).
func Fidelity(recs []Record, rate float64, d time.Duration, sources int, maxLag time.Duration) Step {
	sources = max(sources, 1)
	per := rate / float64(sources)
	st := Step{Rate: rate, Duration: d, Recorded: len(recs)}
	if per > 0 {
		st.Planned = sources * int(math.Ceil(per*d.Seconds()-1e-9))
	}
	bySource := map[string][]Record{}
	for _, r := range recs {
		bySource[r.Source] = append(bySource[r.Source], r)
	}
	var lags []time.Duration
	for _, rs := range bySource {
		slices.SortStableFunc(rs, func(a, b Record) int { return a.Start.Compare(b.Start) })
		// offset_i = start_i − i/per, relative to the first start; origin is their minimum.
		offsets := make([]time.Duration, len(rs))
		origin := time.Duration(math.MaxInt64)
		for i, r := range rs {
			due := time.Duration(0)
			if per > 0 {
				due = time.Duration(float64(i) / per * float64(time.Second))
			}
			offsets[i] = r.Start.Sub(rs[0].Start) - due
			origin = min(origin, offsets[i])
		}
		for i, r := range rs {
			lag := offsets[i] - origin
			lags = append(lags, lag)
			onTime := lag <= maxLag
			if onTime {
				st.OnTime++
			}
			if r.OK {
				st.OK++
			}
			if onTime && r.OK {
				st.Good++
			}
		}
	}
	if len(lags) > 0 {
		slices.Sort(lags)
		st.LagMax = lags[len(lags)-1]
		st.Lag99 = lags[min(len(lags)-1, int(math.Ceil(0.99*float64(len(lags))))-1)]
	}
	switch {
	case st.Planned > 0:
		st.Fidelity = float64(min(st.Good, st.Planned)) / float64(st.Planned)
	case len(recs) == 0:
		st.Fidelity = 1 // nothing asked, nothing missed
	}
	return st
}

// Measure runs one step at rate and scores it (with Fidelity). An error stops the search.
type Measure func(ctx context.Context, rate float64) (Step, error)

// Options bound a search. Zero values take the defaults in brackets.
type Options struct {
	Start     float64 // first rate tried [500]
	Min       float64 // the search gives up below this rate [Start/16]
	Max       float64 // no rate above is tried [50000]
	Factor    float64 // the ladder's growth per step [2]
	Threshold float64 // fidelity a step must reach [DefaultThreshold]
	// Resolution ends the bisection once the gap between held and missed is at most this fraction
	// of the rate held [0.1].
	Resolution float64
	// Budget bounds the search's wall time: a step is not begun when the longest step so far
	// (or StepCost, before the first) would overrun it [3m].
	Budget   time.Duration
	StepCost time.Duration // expected wall time of one step [20s]
	// Retries is how many times a missed rate is measured again before it counts as missed. On a
	// shared machine another job can only lower a step's fidelity, never raise it, so the best of
	// a few tries is the generator's own ceiling [0].
	Retries int
	// OnStep is told of every step as it is scored (optional).
	OnStep func(Step)
}

func (o *Options) defaults() {
	if o.Start <= 0 {
		o.Start = 500
	}
	if o.Min <= 0 {
		o.Min = o.Start / 16
	}
	if o.Max <= 0 {
		o.Max = 50000
	}
	if o.Factor <= 1 {
		o.Factor = 2
	}
	if o.Threshold <= 0 {
		o.Threshold = DefaultThreshold
	}
	if o.Resolution <= 0 {
		o.Resolution = 0.1
	}
	if o.Budget <= 0 {
		o.Budget = 3 * time.Minute
	}
	if o.StepCost <= 0 {
		o.StepCost = 20 * time.Second
	}
}

// Result is what a search found.
type Result struct {
	// Held is the highest rate whose step reached the threshold; 0 when none did.
	Held float64
	// HeldStep is that step.
	HeldStep Step
	// Missed is the lowest rate above Held whose step fell short; 0 when none did (the ladder
	// reached Max or the budget ran out first).
	Missed float64
	// Steps are every step in the order run.
	Steps []Step
	// Cut is true when the budget ended the search before it resolved Held within Resolution.
	Cut bool
}

// ErrBudget is returned with a Result when the budget ran out before a single step could run.
var ErrBudget = errors.New("maxrate: budget too small for one step")

// Search finds the highest rate measure holds: it starts at Start and multiplies the rate by
// Factor while steps hold (up to Max); if the first step misses it divides instead until one holds
// (down to Min); then it bisects between the rate held and the rate missed until they are within
// Resolution, the budget allowing. A rate is held when one of its 1 + Retries tries holds. Rates
// are whole requests per second.
func Search(ctx context.Context, opts Options, measure Measure) (Result, error) {
	opts.defaults()
	var res Result
	began := time.Now()
	longest := opts.StepCost
	run := func(rate float64) (bool, error) {
		var st Step
		for try := 0; try <= opts.Retries && !st.Held; try++ {
			if time.Since(began)+longest > opts.Budget {
				res.Cut = true
				if try == 0 {
					return false, nil
				}
				break // the tries so far decide
			}
			t0 := time.Now()
			var err error
			st, err = measure(ctx, rate)
			st.Rate = rate
			st.Took = time.Since(t0) - st.Waited
			began = began.Add(st.Waited)
			if err != nil {
				return false, fmt.Errorf("maxrate: step at %g rps: %w", rate, err)
			}
			if len(res.Steps) == 0 {
				longest = st.Took
			}
			longest = max(longest, st.Took)
			st.Held = st.Fidelity >= opts.Threshold
			res.Steps = append(res.Steps, st)
			if opts.OnStep != nil {
				opts.OnStep(st)
			}
		}
		if st.Held && rate > res.Held {
			res.Held, res.HeldStep = rate, st
		}
		if !st.Held && (res.Missed == 0 || rate < res.Missed) {
			res.Missed = rate
		}
		return true, nil
	}

	// Ladder up from Start (or down, when Start is missed).
	rate := math.Round(min(opts.Start, opts.Max))
	for {
		ran, err := run(rate)
		if err != nil {
			return res, err
		}
		if !ran {
			if len(res.Steps) == 0 {
				return res, ErrBudget
			}
			return res, nil
		}
		last := res.Steps[len(res.Steps)-1]
		switch {
		case last.Held && rate >= opts.Max:
			return res, nil
		case last.Held && res.Missed == 0:
			rate = math.Round(min(rate*opts.Factor, opts.Max))
			continue
		case !last.Held && res.Held == 0:
			rate = math.Round(rate / opts.Factor)
			if rate < opts.Min {
				return res, nil
			}
			continue
		}
		break
	}

	// Bisect between the rate held and the rate missed.
	for (res.Missed-res.Held)/res.Held > opts.Resolution {
		mid := math.Round((res.Held + res.Missed) / 2)
		if mid <= res.Held || mid >= res.Missed {
			break
		}
		ran, err := run(mid)
		if err != nil {
			return res, err
		}
		if !ran {
			return res, nil
		}
	}
	return res, nil
}
