package loadgen

import (
	"math"
	"sync"
	"time"
)

// segment is a stretch of constant rate starting at offset start, when base hits were due.
type segment struct {
	start time.Duration
	rate  float64
	base  float64
}

// phasedPacer is a vegeta.Pacer whose rate follows a schedule of phases and can be changed while the
// attack runs (SetRate). Hit h (from 0) is due at the instant the integral of the rate reaches h, so
// the first hit goes out at once and a run of d at r sends exactly r·d hits. It also enforces the run's
// bounds: no hit is due at or after limit, none after count hits, none once stopped. Pace blocks
// until the next hit is due, waking early when the rate changes or the run is stopped.
type phasedPacer struct {
	limit time.Duration // 0: none
	count uint64        // 0: none

	mu       sync.Mutex
	segs     []segment
	began    time.Time // attack start, learned on the first Pace call
	changed  chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	ended    time.Time // when Pace first reported stop
}

func newPhasedPacer(phases []Phase, limit time.Duration, count uint64) *phasedPacer {
	p := &phasedPacer{limit: limit, count: count, changed: make(chan struct{}), stop: make(chan struct{})}
	var at time.Duration
	var base float64
	for _, ph := range phases {
		p.segs = append(p.segs, segment{start: at, rate: ph.Rate, base: base})
		if ph.For == 0 {
			return p
		}
		base += ph.Rate * ph.For.Seconds()
		at += ph.For
	}
	// Every phase has a length: the load ends after the last one.
	p.segs = append(p.segs, segment{start: at, rate: 0, base: base})
	if p.limit == 0 || at < p.limit {
		p.limit = at
	}
	return p
}

// expected returns how many hits are due by elapsed (as a real number) and the segment index.
func (p *phasedPacer) expected(elapsed time.Duration) (float64, int) {
	i := len(p.segs) - 1
	for i > 0 && p.segs[i].start > elapsed {
		i--
	}
	s := p.segs[i]
	return s.base + s.rate*(elapsed-s.start).Seconds(), i
}

// dueAt returns the offset at which hit h is due, or false when no scheduled rate ever reaches it.
func (p *phasedPacer) dueAt(h float64) (time.Duration, bool) {
	for i := range p.segs {
		s := p.segs[i]
		if s.rate <= 0 {
			continue
		}
		t := s.start + time.Duration(math.Ceil((h-s.base)/s.rate*1e9))
		if t < s.start {
			t = s.start
		}
		if i+1 < len(p.segs) && t >= p.segs[i+1].start {
			continue
		}
		return t, true
	}
	return 0, false
}

// Pace implements vegeta.Pacer.
func (p *phasedPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	now := time.Now()
	p.mu.Lock()
	if p.began.IsZero() {
		p.began = now.Add(-elapsed)
	}
	began := p.began
	p.mu.Unlock()
	for {
		elapsed = time.Since(began)
		if p.count > 0 && hits >= p.count {
			return 0, p.end()
		}
		select {
		case <-p.stop:
			return 0, p.end()
		default:
		}
		p.mu.Lock()
		due, ok := p.dueAt(float64(hits))
		changed := p.changed
		p.mu.Unlock()
		if p.limit > 0 && (!ok || due >= p.limit) {
			// No hit falls inside the run any more, unless the rate changes before its end.
			if elapsed >= p.limit {
				return 0, p.end()
			}
			due, ok = p.limit, true
		} else if ok && due <= elapsed {
			return 0, false // due, or overdue: a late hit is still sent
		}
		wait := time.Duration(-1) // forever, unless the rate changes or the run is stopped
		if ok {
			wait = due - elapsed
		}
		var timer *time.Timer
		var fired <-chan time.Time
		if wait >= 0 {
			timer = time.NewTimer(wait)
			fired = timer.C
		}
		select {
		case <-fired:
		case <-changed:
		case <-p.stop:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

func (p *phasedPacer) end() bool {
	p.Stop()
	return true
}

// Rate implements vegeta.Pacer: the scheduled rate at elapsed.
func (p *phasedPacer) Rate(elapsed time.Duration) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, i := p.expected(elapsed)
	return p.segs[i].rate
}

// current returns the rate in force now.
func (p *phasedPacer) current() float64 {
	p.mu.Lock()
	began := p.began
	p.mu.Unlock()
	if began.IsZero() {
		return p.Rate(0)
	}
	return p.Rate(time.Since(began))
}

// SetRate makes rate the rate from now on, replacing any phases still scheduled, and returns the rate
// it replaced.
func (p *phasedPacer) SetRate(rate float64) float64 {
	if rate < 0 {
		rate = 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var elapsed time.Duration
	if !p.began.IsZero() {
		elapsed = time.Since(p.began)
	}
	exp, i := p.expected(elapsed)
	prev := p.segs[i].rate
	p.segs = append(p.segs[:i+1], segment{start: elapsed, rate: rate, base: exp})
	if p.segs[i].start == elapsed {
		p.segs = append(p.segs[:i], p.segs[i+1])
	}
	close(p.changed)
	p.changed = make(chan struct{})
	return prev
}

// Stop makes the next Pace call (or the one blocked now) end the attack, and records when.
func (p *phasedPacer) Stop() {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.ended = time.Now()
		p.mu.Unlock()
		close(p.stop)
	})
}

// Ended returns when the pacer ended the attack or was stopped (zero while it runs).
func (p *phasedPacer) Ended() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}
