package runner

import (
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
