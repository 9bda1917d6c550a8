package maxrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// paced returns n records of one source sent exactly on a schedule of rate per second from at.
func paced(source string, at time.Time, rate float64, n int) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i] = Record{Source: source, Start: at.Add(time.Duration(float64(i) / rate * float64(time.Second))), OK: true}
	}
	return out
}

// TestFidelityPunctual: every planned request sent on schedule and answered is fidelity 1, from
// one pacer or from several sharing the rate with clocks that disagree.
func TestFidelityPunctual(t *testing.T) {
	st := Fidelity(paced("", t0, 1000, 8000), 1000, 8*time.Second, 1, DefaultMaxLag)
	if st.Planned != 8000 || st.Good != 8000 || st.Fidelity != 1 || st.LagMax > time.Microsecond {
		t.Fatalf("punctual host load: %+v", st)
	}
	// Two agents at 500 rps each; the second's clock is 3 s off and it started 40 ms later.
	recs := append(paced("a", t0, 500, 4000), paced("b", t0.Add(3*time.Second+40*time.Millisecond), 500, 4000)...)
	st = Fidelity(recs, 1000, 8*time.Second, 2, DefaultMaxLag)
	if st.Planned != 8000 || st.Good != 8000 || st.Fidelity != 1 {
		t.Fatalf("punctual agents: %+v", st)
	}
}

// TestFidelityLateFailedMissing: a request sent later than MaxLag, one that failed and one never
// recorded each cost fidelity; a late one within MaxLag does not.
func TestFidelityLateFailedMissing(t *testing.T) {
	recs := paced("", t0, 100, 1000) // 10 s at 100 rps
	// A stall of 305 ms from request 500: requests 500..530 were due during it and go out together
	// at its end, 305 ms … 5 ms late; the rest resume on schedule.
	stall := recs[500].Start.Add(305 * time.Millisecond)
	for i := 500; i <= 530; i++ {
		recs[i].Start = stall
	}
	recs[10].OK = false
	recs = append(recs[:999], recs[1000:]...) // one never recorded
	st := Fidelity(recs, 100, 10*time.Second, 1, DefaultMaxLag)
	// Due at 5.00 … 5.30 s, sent at 5.305 s: over 100 ms late for 5.00 … 5.20 (21 requests).
	if st.OnTime != 999-21 || st.OK != 998 || st.Good != 999-21-1 {
		t.Fatalf("on time %d ok %d good %d; want 978, 998, 977 (%+v)", st.OnTime, st.OK, st.Good, st)
	}
	if want := 977.0 / 1000; math.Abs(st.Fidelity-want) > 1e-9 {
		t.Fatalf("fidelity %v, want %v", st.Fidelity, want)
	}
	if st.LagMax != 305*time.Millisecond {
		t.Fatalf("max lag %v, want 305ms", st.LagMax)
	}
}

// TestFidelityFallingBehind: a pacer that only manages 80% of the rate falls further behind each
// second; after MaxLag of accumulated delay nothing is on time.
func TestFidelityFallingBehind(t *testing.T) {
	recs := paced("", t0, 800, 8000) // asked 1000 rps for 8 s, sent at 800 rps for 10 s
	st := Fidelity(recs, 1000, 8*time.Second, 1, DefaultMaxLag)
	// Request i lags i/800 − i/1000 = i/4000 s: on time while i ≤ 400 (at the bound, 400 or 401).
	if st.OnTime < 400 || st.OnTime > 401 || st.Fidelity > 0.06 {
		t.Fatalf("falling behind: %+v", st)
	}
}

// TestFidelityEmpty: a step that planned requests and recorded none is 0.
func TestFidelityEmpty(t *testing.T) {
	if st := Fidelity(nil, 1000, time.Second, 2, DefaultMaxLag); st.Fidelity != 0 || st.Planned != 1000 {
		t.Fatalf("nothing recorded: %+v", st)
	}
}

// fake is a load generator that holds every rate up to capacity; a step's took is fixed.
type fake struct {
	capacity float64
	took     time.Duration
	rates    []float64
	fail     float64 // a step at this rate returns an error
	wait     time.Duration
}

func (f *fake) measure(_ context.Context, rate float64) (Step, error) {
	f.rates = append(f.rates, rate)
	if rate == f.fail {
		return Step{}, errors.New("agent pod vanished")
	}
	time.Sleep(f.wait + f.took)
	fid := 1.0
	if rate > f.capacity {
		fid = 0.985 // just short of the threshold
	}
	return Step{Fidelity: fid, Waited: f.wait}, nil
}

// TestSearchFindsCapacity: the ladder doubles to the first miss, the bisection brings held within
// Resolution of the capacity, and the steps are the ones expected.
func TestSearchFindsCapacity(t *testing.T) {
	for _, capacity := range []float64{700, 3000, 4999, 12345} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			f := &fake{capacity: capacity}
			res, err := Search(context.Background(), Options{Start: 500, Resolution: 0.05}, f.measure)
			if err != nil {
				t.Fatal(err)
			}
			if res.Held > capacity || res.Held < capacity*0.95 || res.Missed <= capacity {
				t.Fatalf("held %g missed %g for capacity %g (rates %v)", res.Held, res.Missed, capacity, f.rates)
			}
			if (res.Missed-res.Held)/res.Held > 0.05 || res.Cut {
				t.Fatalf("not resolved: held %g missed %g cut %v", res.Held, res.Missed, res.Cut)
			}
			if !res.HeldStep.Held || res.HeldStep.Rate != res.Held || len(res.Steps) != len(f.rates) {
				t.Fatalf("held step %+v, %d steps for %d rates", res.HeldStep, len(res.Steps), len(f.rates))
			}
			// The ladder: 500, 1000, 2000, … up to the first miss.
			for i, r := range f.rates {
				if want := 500 * math.Pow(2, float64(i)); r != want {
					break
				}
				if r > capacity && i+1 < len(f.rates) && f.rates[i+1] > r {
					t.Fatalf("the ladder went on past a miss: %v", f.rates)
				}
			}
		})
	}
}

// TestSearchDescends: a start above capacity halves until a rate holds, then bisects.
func TestSearchDescends(t *testing.T) {
	f := &fake{capacity: 300}
	res, err := Search(context.Background(), Options{Start: 2000}, f.measure)
	if err != nil {
		t.Fatal(err)
	}
	if f.rates[0] != 2000 || f.rates[1] != 1000 || f.rates[2] != 500 || f.rates[3] != 250 {
		t.Fatalf("descent %v", f.rates)
	}
	if res.Held < 270 || res.Held > 300 {
		t.Fatalf("held %g for capacity 300 (rates %v)", res.Held, f.rates)
	}
}

// TestSearchNothingHeld: when not even Min holds, Held is 0 and the descent stops at Min.
func TestSearchNothingHeld(t *testing.T) {
	f := &fake{capacity: 1}
	res, err := Search(context.Background(), Options{Start: 800, Min: 100}, f.measure)
	if err != nil {
		t.Fatal(err)
	}
	if res.Held != 0 || res.Missed != 100 || f.rates[len(f.rates)-1] != 100 {
		t.Fatalf("held %g missed %g rates %v", res.Held, res.Missed, f.rates)
	}
}

// TestSearchMax: a generator that holds everything stops at Max, with nothing missed.
func TestSearchMax(t *testing.T) {
	f := &fake{capacity: math.Inf(1)}
	res, err := Search(context.Background(), Options{Start: 500, Max: 3000}, f.measure)
	if err != nil {
		t.Fatal(err)
	}
	if res.Held != 3000 || res.Missed != 0 || len(f.rates) != 4 { // 500, 1000, 2000, 3000
		t.Fatalf("held %g missed %g rates %v", res.Held, res.Missed, f.rates)
	}
}

// TestSearchBudget: no step begins that the longest step so far would carry past the budget, and a
// search cut short says so.
func TestSearchBudget(t *testing.T) {
	// Steps of 100 ms in a 550 ms budget: a late timer on a loaded host (tens of ms) moves no bound.
	f := &fake{capacity: 100000, took: 100 * time.Millisecond}
	res, err := Search(context.Background(), Options{Start: 100, Budget: 550 * time.Millisecond, StepCost: time.Millisecond}, f.measure)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cut || len(f.rates) < 3 || len(f.rates) > 5 {
		t.Fatalf("cut %v after %d steps (%v); want cut after 3 to 5 of 100 ms in 550 ms", res.Cut, len(f.rates), f.rates)
	}
	// Waiting before a step counts neither in its cost nor against the budget (counted, the first
	// step would take at least 250 ms).
	f = &fake{capacity: 100000, took: 100 * time.Millisecond, wait: 150 * time.Millisecond}
	res, err = Search(context.Background(), Options{Start: 100, Budget: 550 * time.Millisecond, StepCost: time.Millisecond}, f.measure)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.rates) < 3 || len(f.rates) > 5 || res.Steps[0].Took > 200*time.Millisecond {
		t.Fatalf("with waits: %d steps (%v), first took %v; want 3 to 5 steps of 100 ms", len(f.rates), f.rates, res.Steps[0].Took)
	}
	if _, err := Search(context.Background(), Options{Budget: time.Millisecond, StepCost: time.Second}, f.measure); !errors.Is(err, ErrBudget) {
		t.Fatalf("a budget below one step: %v, want ErrBudget", err)
	}
}

// TestSearchError: a measure's error stops the search and is returned with the steps so far.
func TestSearchError(t *testing.T) {
	f := &fake{capacity: 100000, fail: 2000}
	res, err := Search(context.Background(), Options{Start: 500}, f.measure)
	if err == nil || len(res.Steps) != 2 || res.Held != 1000 {
		t.Fatalf("err %v, steps %d, held %g", err, len(res.Steps), res.Held)
	}
}

// TestFidelityLateFirst: the schedule is the one the pacer kept at its most punctual, so requests
// held up at the very start (a pacer stalled as it began) are late, not the origin of a schedule
// that everything after them beats.
func TestFidelityLateFirst(t *testing.T) {
	recs := paced("", t0, 100, 100)
	for i := 0; i <= 20; i++ { // due at 0 … 200 ms, all sent at 205 ms
		recs[i].Start = t0.Add(205 * time.Millisecond)
	}
	st := Fidelity(recs, 100, time.Second, 1, DefaultMaxLag)
	// Lags 205, 195, …, 105 ms for the first 11.
	if st.OnTime != 89 || st.LagMax != 205*time.Millisecond {
		t.Fatalf("first requests 205 ms late: %+v", st)
	}
}

// flaky holds every rate up to capacity except on the tries listed (1-based, across the search),
// which miss as if another job had taken the machine.
type flaky struct {
	capacity float64
	spoil    map[int]bool
	tries    int
	rates    []float64
}

func (f *flaky) measure(_ context.Context, rate float64) (Step, error) {
	f.tries++
	f.rates = append(f.rates, rate)
	if rate > f.capacity || f.spoil[f.tries] {
		return Step{Fidelity: 0.5}, nil
	}
	return Step{Fidelity: 1}, nil
}

// TestSearchRetries: a miss caused by something else is measured again, and the rate is held;
// without retries the same spoiled try would end the ladder there. A true miss is tried 1 +
// Retries times and stays missed.
func TestSearchRetries(t *testing.T) {
	f := &flaky{capacity: 3000, spoil: map[int]bool{2: true}} // the first try at 1000 is spoiled
	res, err := Search(context.Background(), Options{Start: 500, Retries: 1, Resolution: 0.05}, f.measure)
	if err != nil {
		t.Fatal(err)
	}
	if res.Held < 2850 || res.Held > 3000 || f.rates[1] != 1000 || f.rates[2] != 1000 {
		t.Fatalf("with a retry: held %g, rates %v", res.Held, f.rates)
	}
	tries := 0
	for _, r := range f.rates {
		if r == 4000 {
			tries++
		}
	}
	if tries != 2 {
		t.Fatalf("4000 (a true miss) tried %d times, want 2: %v", tries, f.rates)
	}

	f = &flaky{capacity: 3000, spoil: map[int]bool{2: true}}
	res, err = Search(context.Background(), Options{Start: 500, Resolution: 0.05}, f.measure)
	if err != nil {
		t.Fatal(err)
	}
	if res.Held >= 1000 {
		t.Fatalf("without retries a spoiled try at 1000 still held %g (rates %v)", res.Held, f.rates)
	}
}
