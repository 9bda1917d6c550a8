package runner

import (
	"context"
	"time"

	"github.com/probegate/probegate/internal/maxrate"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/reports"
)

func TestOverloadRateFromCapacity(t *testing.T) {
	for _, tc := range []struct {
		c     reports.Capacity
		mult  float64
		want  float64
		words string
	}{
		{reports.Capacity{Rate: 150, Saturated: true}, 2, 300, "a higher rate was not served"},
		// The harness fell behind at 1200 rps: the overload asks for no more than it sent on time.
		{reports.Capacity{Rate: 800, HarnessLimit: 1200}, 2, 800, "the harness fell behind at 1200 rps"},
		// Past what the harness keeps and judges: capped, and reported not saturated.
		{reports.Capacity{Rate: 1920}, 2, capacityMax, "not saturated within the search"},
	} {
		if got := overloadRate(tc.c, tc.mult); got != tc.want {
			t.Errorf("%+v × %g: %g, want %g", tc.c, tc.mult, got, tc.want)
		}
		if !strings.Contains(tc.c.String(), tc.words) {
			t.Errorf("%+v: %q, want %q", tc.c, tc.c.String(), tc.words)
		}
	}
}

func TestCapacityEntryCarriesTheSearch(t *testing.T) {
	c := reports.Capacity{Rate: 800, HarnessLimit: 1200, Steps: []string{"800/s held"}}
	e := capacityEntry(c)
	if e.Kind != timeline.KindCapacity || e.Capacity == nil || *e.Capacity != (timeline.CapacitySearch{Rate: 800, HarnessLimit: 1200}) {
		t.Fatalf("entry %+v (capacity %+v)", e, e.Capacity)
	}
}

// TestCapacitySearchOutlivesOneHiccup: a target that holds 240/s but misses its 120/s step once (a
// pause on the node) is still measured above 120/s; without the retry the search bounded the
// capacity at 60/s and the overload, at twice that, never saturated the target.
func TestCapacitySearchOutlivesOneHiccup(t *testing.T) {
	hiccup := true
	measure := func(_ context.Context, rate float64) (maxrate.Step, error) {
		fid := 1.0
		if rate > 240 || (rate == 120 && hiccup) {
			fid = 0.5
		}
		if rate == 120 {
			hiccup = false
		}
		return maxrate.Step{Planned: 100, Fidelity: fid}, nil
	}
	opts := capacityOptions(30)
	opts.Budget = time.Hour
	res, err := maxrate.Search(context.Background(), opts, measure)
	if err != nil {
		t.Fatal(err)
	}
	if res.Held < 240 {
		t.Fatalf("capacity %g after one missed step, want 240 (steps %v)", res.Held, res.Steps)
	}
}
