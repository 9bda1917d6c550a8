package runner

import (
	"slices"
	"testing"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
)

// TestRestartExplainersAgree keeps the two statements of which fault explains which restart in step,
// both ways (audit N9): every restart cause a fault registers (Definition.Explains) must be one
// no-unexpected-restarts accepts from that fault (verdict.Explainers; the verdict cannot import the
// faults package), or a restart the fault brings about would be judged unexpected; and the verdict
// accepts nothing more, or it would explain restarts no fault brings about. The one extension: a
// fault registered for evictions also explains deletions (an evicted pod is deleted; when the
// Evicted evidence is missed, restartcause observes its end as a deletion).
func TestRestartExplainersAgree(t *testing.T) {
	want := map[timeline.RestartCause][]string{}
	for _, d := range faults.Definitions() {
		for _, c := range d.Explains {
			want[c] = append(want[c], d.Type)
			if c == timeline.CauseEviction {
				want[timeline.CauseDeletion] = append(want[timeline.CauseDeletion], d.Type)
			}
		}
	}
	got := verdict.Explainers()
	for c, types := range want {
		for _, typ := range types {
			if !slices.Contains(got[c], typ) {
				t.Errorf("cause %s: fault %s registers it, no-unexpected-restarts does not accept it (accepts %v)", c, typ, got[c])
			}
		}
	}
	for c, types := range got {
		for _, typ := range types {
			if !slices.Contains(want[c], typ) {
				t.Errorf("cause %s: no-unexpected-restarts accepts fault %s, which does not register it (registered: %v)", c, typ, want[c])
			}
		}
	}
}
