package reports

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// sliceLagWindow bounds how far before a withdrawal the pod change that caused it is looked for.
const sliceLagWindow = 10 * time.Second

// SliceLag is the first hop after a pod leaves service: from the pod's own change (a container's
// readiness going false as the kubelet reported it, or the pod's deletion) to its EndpointSlice
// withdrawing the endpoint (the endpoint-slice controller), both as the harness's watches saw them.
// The next hops are kube-proxy's (Propagation) or the front door's (Door).
type SliceLag struct {
	// Withdrawals counts the withdrawals with a cause found; Readiness and Deletion split them by
	// cause; Unmatched counts withdrawals with neither in the 10 s before them.
	Withdrawals int           `json:"withdrawals"`
	Readiness   int           `json:"readiness,omitempty"`
	Deletion    int           `json:"deletion,omitempty"`
	Unmatched   int           `json:"unmatched,omitempty"`
	Median      time.Duration `json:"median"`
	Max         time.Duration `json:"max"`
}

// sliceLag measures the kubelet → EndpointSlice hop over the run's withdrawals; nil without any.
func sliceLag(entries []timeline.Entry) *SliceLag {
	ws := timeline.Endpoints(entries).Withdrawals()
	if len(ws) == 0 {
		return nil
	}
	sl := &SliceLag{}
	var lags []time.Duration
	for _, w := range ws {
		at, deletion, ok := podChangeBefore(entries, w.Pod, w.From.T)
		if !ok {
			sl.Unmatched++
			continue
		}
		if deletion {
			sl.Deletion++
		} else {
			sl.Readiness++
		}
		lags = append(lags, w.From.T-at)
	}
	sl.Withdrawals = len(lags)
	if len(lags) > 0 {
		slices.Sort(lags)
		sl.Median, sl.Max = lags[len(lags)/2], lags[len(lags)-1]
	}
	return sl
}

// podChangeBefore is the latest change of pod that takes it out of service at or before t (within
// sliceLagWindow): a container's ready true → false, or the pod's deletion.
func podChangeBefore(entries []timeline.Entry, pod string, t time.Duration) (at time.Duration, deletion, ok bool) {
	for _, e := range entries {
		if e.T > t {
			break
		}
		if e.Kind != timeline.KindPod || e.Pod != pod || e.PodChange == nil || e.T < t-sliceLagWindow {
			continue
		}
		c := e.PodChange
		switch {
		case c.Field == "deleting":
			at, deletion, ok = e.T, true, true
		case strings.HasPrefix(c.Field, "container/") && strings.HasSuffix(c.Field, "/ready") && c.From == "true" && c.To == "false":
			at, deletion, ok = e.T, false, true
		}
	}
	return at, deletion, ok
}

// sliceLine is the terminal's line on the first hop ("" without withdrawals).
func sliceLine(l *SliceLag) string {
	if l == nil || l.Withdrawals == 0 {
		return ""
	}
	var causes []string
	if l.Readiness > 0 {
		causes = append(causes, fmt.Sprintf("%d by readiness", l.Readiness))
	}
	if l.Deletion > 0 {
		causes = append(causes, fmt.Sprintf("%d by deletion", l.Deletion))
	}
	if l.Unmatched > 0 {
		causes = append(causes, fmt.Sprintf("%d with no pod change seen", l.Unmatched))
	}
	return fmt.Sprintf("kubelet → EndpointSlice: endpoint withdrawn median %s max %s after the pod's change, over %d withdrawals (%s)",
		Millis(l.Median), Millis(l.Max), l.Withdrawals, strings.Join(causes, ", "))
}
