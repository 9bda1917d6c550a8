package scenarios

import (
	"sync"
	"time"
)

// defaultSettle is how long after the first run asks for its turn a run that must be alone waits
// for the others to ask too: the features of the suite and the matrix start together.
const defaultSettle = 3 * time.Second

// turns orders the suite's runs on the runner's slots: the scenarios that may share the cluster
// first, longest first (the last to finish is then a short one: with two slots on two cores a long
// run finishing alone wasted up to a run's time), as many at once as there are slots; then each of
// the others (parallel: false) alone, once no shared run is running or waiting. A run that must be
// alone no longer holds back the shared runs behind it while it waits (a reader-writer lock did:
// the other slot sat idle until every run before it had ended, 77 s at the start of a suite run on
// 2026-12-07).
type turns struct {
	width  int           // shared runs at once
	settle time.Duration // defaultSettle

	mu      sync.Mutex
	cond    *sync.Cond
	running int         // shared runs holding a turn
	waiting map[int]int // span (ms) → shared runs waiting with it
	alone   bool        // a run that must be alone holds the cluster
	first   time.Time   // when the first run asked for a turn
}

func newTurns(width int) *turns {
	t := &turns{width: max(width, 1), settle: defaultSettle, waiting: map[int]int{}}
	t.cond = sync.NewCond(&t.mu)
	return t
}

// started notes the first request for a turn and wakes the waiters once t.settle has passed.
func (t *turns) started() {
	if t.first.IsZero() {
		t.first = time.Now()
		time.AfterFunc(t.settle, func() {
			t.mu.Lock()
			t.cond.Broadcast()
			t.mu.Unlock()
		})
	}
}

// longest is the longest span among the waiting shared runs.
func (t *turns) longest() int {
	m := -1
	for s, n := range t.waiting {
		if n > 0 && s > m {
			m = s
		}
	}
	return m
}

// shared waits for a turn for a run of the given span that may share the cluster (and, at the
// start, t.settle for the others to ask, so the longest go first); release ends it.
func (t *turns) shared(span time.Duration) (release func()) {
	ms := int(span.Milliseconds())
	t.mu.Lock()
	t.started()
	t.waiting[ms]++
	for t.alone || t.running >= t.width || ms < t.longest() || time.Now().Sub(t.first) < t.settle {
		t.cond.Wait()
	}
	t.waiting[ms]--
	t.running++
	t.cond.Broadcast() // the next longest may go too, when a slot is left
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		t.running--
		t.cond.Broadcast()
		t.mu.Unlock()
	}
}

// exclusive waits until a run can have the cluster alone: t.settle after the first request, no shared
// run running or waiting, no other lone run; release ends it.
func (t *turns) exclusive() (release func()) {
	t.mu.Lock()
	t.started()
	for t.alone || t.running > 0 || t.longest() >= 0 || time.Now().Sub(t.first) < t.settle {
		t.cond.Wait()
	}
	t.alone = true
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		t.alone = false
		t.cond.Broadcast()
		t.mu.Unlock()
	}
}
