package timeline

import (
	"strings"
	"testing"
	"time"
)

func TestDeclaredFaultShortfall(t *testing.T) {
	s := time.Second
	ms := time.Millisecond
	dbDown := DeclaredFault{Name: "faults[1]", Type: "db-down", Due: 23 * s, Duration: 3 * s}
	del := DeclaredFault{Name: "faults[0]", Type: "pod-delete", Due: 10 * s}
	win := func(name string, from, to time.Duration) FaultWindow {
		return FaultWindow{Name: name, Type: "db-down", Start: from, End: to, Reverted: to > 0}
	}
	for _, c := range []struct {
		name    string
		d       DeclaredFault
		windows []FaultWindow
		want    string // "" or a substring of the shortfall
	}{
		{"on time and full length", dbDown, []FaultWindow{win("faults[1]", 23*s+100*ms, 26*s+50*ms)}, ""},
		{"short within a quarter", dbDown, []FaultWindow{win("faults[1]", 23*s+600*ms, 26*s)}, ""},
		{"short by more than a quarter", dbDown, []FaultWindow{win("faults[1]", 23*s+900*ms, 26*s)},
			"db-down (faults[1]) ran 2.1s of its declared 3s"},
		{"squeezed after a late inject", dbDown, []FaultWindow{win("faults[1]", 37*s, 37*s+200*ms)},
			"db-down (faults[1]) ran 0.2s of its declared 3s: injected 14s late"},
		{"cut short by an early revert", dbDown, []FaultWindow{win("faults[1]", 23*s, 24*s)},
			"db-down (faults[1]) ran 1s of its declared 3s: reverted 2s before its declared end"},
		{"late but full length", dbDown, []FaultWindow{win("faults[1]", 30*s, 33*s)},
			"db-down (faults[1]) was injected 7s late (due at 23s)"},
		{"another fault's window is no trace", dbDown, []FaultWindow{win("faults[0]", 23*s, 26*s)},
			"db-down (faults[1]) left no trace on the timeline: due at 23s"},
		{"no window at all", dbDown, nil, "left no trace"},
		{"a skip is a trace", dbDown, []FaultWindow{{Name: "faults[1]", Type: "db-down", Skipped: true, SkipNote: "not reached"}}, ""},
		{"one-shot on time", del, []FaultWindow{{Name: "faults[0]", Type: "pod-delete", Start: 10*s + 800*ms}}, ""},
		{"one-shot a busy node's set-up late", del, []FaultWindow{{Name: "faults[0]", Type: "pod-delete", Start: 11*s + 900*ms}}, ""},
		{"one-shot late", del, []FaultWindow{{Name: "faults[0]", Type: "pod-delete", Start: 12*s + 500*ms}},
			"pod-delete (faults[0]) was injected 2.5s late (due at 10s)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.d.Shortfall(c.windows)
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Fatalf("Shortfall = %q, want %q", got, c.want)
			}
		})
	}
}
