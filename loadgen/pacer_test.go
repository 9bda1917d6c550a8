package loadgen

import (
	"testing"
	"time"
)

func TestPhasedPacerSchedule(t *testing.T) {
	p := newPhasedPacer([]Phase{{Rate: 10, For: time.Second}, {Rate: 0, For: time.Second}, {Rate: 100, For: time.Second}}, 0, 0)
	if p.limit != 3*time.Second {
		t.Fatalf("limit = %v, want the phases' total 3s", p.limit)
	}
	for _, tc := range []struct {
		hit  float64
		want time.Duration
		ok   bool
	}{
		{0, 0, true},
		{9, 900 * time.Millisecond, true},
		{10, 2 * time.Second, true}, // the pause skips to the third phase
		{109, 2*time.Second + 990*time.Millisecond, true},
		{110, 0, false}, // beyond every scheduled hit
	} {
		got, ok := p.dueAt(tc.hit)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("dueAt(%g) = %v, %v; want %v, %v", tc.hit, got, ok, tc.want, tc.ok)
		}
	}
	if r := p.Rate(1500 * time.Millisecond); r != 0 {
		t.Errorf("rate in the pause = %g", r)
	}
	if r := p.Rate(2500 * time.Millisecond); r != 100 {
		t.Errorf("rate in the last phase = %g", r)
	}
}

func TestPhasedPacerSetRateKeepsTheHitsAlreadyDue(t *testing.T) {
	p := newPhasedPacer([]Phase{{Rate: 10}}, 0, 0)
	p.began = time.Now().Add(-2 * time.Second) // two seconds in: 20 hits due
	if prev := p.SetRate(100); prev != 10 {
		t.Fatalf("SetRate returned %g", prev)
	}
	if len(p.segs) != 2 || p.segs[1].base < 19.9 || p.segs[1].base > 20.5 || p.segs[1].rate != 100 {
		t.Fatalf("segments after SetRate = %+v", p.segs)
	}
	due, ok := p.dueAt(30)
	if !ok || due < 2*time.Second || due > 2200*time.Millisecond {
		t.Fatalf("hit 30 due at %v, %v; want about 2.1s", due, ok)
	}
}
