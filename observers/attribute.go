package observers

import (
	"sort"

	"github.com/probegate/probegate/internal/restartcause"
	"github.com/probegate/probegate/internal/timeline"
)

// AttributeRestarts is the final pass over a finished timeline: it returns a copy of entries in
// time order in which every ContainerRestart's Cause and Evidence are decided again with all the
// evidence now on the timeline, including events that arrived after the restart was recorded.
// Restarts that happened unseen inside a watch gap keep their "unknown". Call it before judging;
// the live timeline itself is append-only and keeps the first guess.
func AttributeRestarts(entries []timeline.Entry) []timeline.Entry {
	sorted := append([]timeline.Entry(nil), entries...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].T < sorted[j].T })
	out := append([]timeline.Entry(nil), sorted...)
	for i, e := range sorted {
		if e.Kind != timeline.KindRestart || e.Restart == nil || e.Restart.Evidence == unseenRestart {
			continue
		}
		r := *e.Restart
		r.Cause, r.Evidence = restartcause.Attribute(e, sorted)
		out[i].Restart = &r
	}
	return out
}
