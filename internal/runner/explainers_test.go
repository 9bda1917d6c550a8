package runner

import (
	"slices"
	"testing"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
)

// TestRestartExplainersAgree keeps the two statements of which fault explains which restart in step:
// every restart cause a fault registers (Definition.Explains) must be one no-unexpected-restarts
// accepts from that fault (verdict.Explainers; the verdict cannot import the faults package), or a
// restart the fault brings about would be judged unexpected. The verdict accepts more (any
// deleting fault for a deletion or an eviction: the observed cause of a deleted pod's end depends
// on which evidence arrived first).
func TestRestartExplainersAgree(t *testing.T) {
	fromFaults := map[timeline.RestartCause][]string{}
	for _, d := range faults.Definitions() {
		for _, c := range d.Explains {
			fromFaults[c] = append(fromFaults[c], d.Type)
		}
	}
	fromVerdict := verdict.Explainers()
	for c, types := range fromFaults {
		for _, typ := range types {
			if !slices.Contains(fromVerdict[c], typ) {
				t.Errorf("cause %s: fault %s registers it, no-unexpected-restarts does not accept it (accepts %v)", c, typ, fromVerdict[c])
			}
		}
	}
}
