// Package seed is probegate's one source of randomness. Every choice a scenario makes (which pod to
// hit, when inside a window to strike) draws from a Source derived from the scenario's seed, so a run
// replays exactly when given the same seed.
//
// Each consumer takes its own stream with Fork(label): streams are independent of one another, so
// adding a fault to a scenario does not change the choices of the faults already in it.
package seed

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"
)

// Source is a deterministic random stream. It is not safe for concurrent use; Fork one per goroutine.
type Source struct {
	seed  uint64
	label string
	rng   *rand.Rand
}

// New returns the root stream for seed.
func New(seed uint64) *Source { return derive(seed, "") }

// FromTime returns a root stream seeded from the clock, for runs that did not ask for a seed. Record
// Seed() so the run can be replayed.
func FromTime() *Source { return New(uint64(time.Now().UnixNano())) }

func derive(seed uint64, label string) *Source {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", seed, label)
	return &Source{seed: seed, label: label, rng: rand.New(rand.NewPCG(seed, h.Sum64()))}
}

// Seed is the root seed this stream derives from.
func (s *Source) Seed() uint64 { return s.seed }

// Label is the stream's path below the root ("" for the root, "a/b" for New(x).Fork("a").Fork("b")).
func (s *Source) Label() string { return s.label }

// Fork returns an independent stream named label below this one. The same seed and path always give
// the same stream, however many values were drawn from the parent.
func (s *Source) Fork(label string) *Source {
	if s.label != "" {
		label = s.label + "/" + label
	}
	return derive(s.seed, label)
}

// Intn returns a value in [0, n). It panics if n <= 0.
func (s *Source) Intn(n int) int { return s.rng.IntN(n) }

// Float64 returns a value in [0, 1).
func (s *Source) Float64() float64 { return s.rng.Float64() }

// Pick returns one of names. The names are sorted first, so the choice depends only on the set of
// names, not on the order an API listed them in. It returns "" for an empty list.
func (s *Source) Pick(names []string) string {
	if len(names) == 0 {
		return ""
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	return sorted[s.rng.IntN(len(sorted))]
}

// Within returns an offset uniformly distributed in [from, to). It returns from when to <= from.
func (s *Source) Within(from, to time.Duration) time.Duration {
	if to <= from {
		return from
	}
	return from + time.Duration(s.rng.Int64N(int64(to-from)))
}
