package seed

import (
	"testing"
	"time"
)

func draw(s *Source, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = s.Intn(1000)
	}
	return out
}

func TestSameSeedReplays(t *testing.T) {
	a, b := draw(New(42), 20), draw(New(42), 20)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("draw %d: %d != %d with the same seed", i, a[i], b[i])
		}
	}
	c := draw(New(43), 20)
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same == len(a) {
		t.Fatal("seeds 42 and 43 gave the same stream")
	}
}

func TestForkIsIndependentOfParentDraws(t *testing.T) {
	root := New(7)
	first := draw(root.Fork("stall"), 10)
	root2 := New(7)
	draw(root2, 100) // drawing from the parent must not shift a child
	draw(root2.Fork("pod-delete"), 50)
	second := draw(root2.Fork("stall"), 10)
	for i := range first {
		if first[i] != second[i] {
			t.Fatalf("fork draw %d differs: %d vs %d", i, first[i], second[i])
		}
	}
	if got := root2.Fork("a").Fork("b").Label(); got != "a/b" {
		t.Fatalf("label = %q, want a/b", got)
	}
	x, y := draw(root.Fork("a"), 10), draw(root.Fork("b"), 10)
	same := 0
	for i := range x {
		if x[i] == y[i] {
			same++
		}
	}
	if same == len(x) {
		t.Fatal("forks a and b gave the same stream")
	}
}

func TestPickIgnoresListOrder(t *testing.T) {
	names := []string{"pod-c", "pod-a", "pod-b"}
	reversed := []string{"pod-b", "pod-a", "pod-c"}
	for seed := uint64(0); seed < 20; seed++ {
		if a, b := New(seed).Pick(names), New(seed).Pick(reversed); a != b {
			t.Fatalf("seed %d: picked %q and %q from the same set", seed, a, b)
		}
	}
	if names[0] != "pod-c" {
		t.Fatal("Pick reordered the caller's slice")
	}
	seen := map[string]bool{}
	for seed := uint64(0); seed < 50; seed++ {
		seen[New(seed).Pick(names)] = true
	}
	if len(seen) != 3 {
		t.Fatalf("50 seeds picked only %v", seen)
	}
	if New(1).Pick(nil) != "" {
		t.Fatal("Pick(nil) should be empty")
	}
}

func TestWithinStaysInWindow(t *testing.T) {
	s := New(3)
	for range 1000 {
		d := s.Within(2*time.Second, 5*time.Second)
		if d < 2*time.Second || d >= 5*time.Second {
			t.Fatalf("Within gave %v outside [2s,5s)", d)
		}
	}
	if d := s.Within(time.Second, time.Second); d != time.Second {
		t.Fatalf("empty window gave %v", d)
	}
}
