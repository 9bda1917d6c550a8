package reports

import (
	"fmt"
	"math"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
)

// HostFigures is how starved for CPU the machine running the harness and the local cluster was
// over the run (timeline.HostSample): the share of the time some task waited for a CPU, its worst
// second, and the most runnable tasks seen.
type HostFigures struct {
	Observed    time.Duration `json:"observed"`
	Waiting     float64       `json:"waiting"`
	WorstSecond float64       `json:"worstSecond"`
	Runnable    int           `json:"runnable"`
	CPUs        int           `json:"cpus"`
}

// hostFigures sums the host samples of the whole run; nil when there are none (a remote cluster).
func hostFigures(entries []timeline.Entry) *HostFigures {
	h := timeline.HostOver(entries, math.MinInt64, math.MaxInt64)
	if h.Observed == 0 {
		return nil
	}
	return &HostFigures{Observed: h.Observed, Waiting: h.Waiting, WorstSecond: h.Worst, Runnable: h.Runnable, CPUs: h.CPUs}
}

// hostLine is the terminal's line on a starved host ("" when the run was not starved on average).
func hostLine(h *HostFigures) string {
	if h == nil || h.Waiting < verdict.StarvedWaiting {
		return ""
	}
	return fmt.Sprintf("host starved for CPU: some task waited %.0f %% of the run (up to %d runnable on %d CPUs); timing verdicts may reflect this machine",
		h.Waiting*100, h.Runnable, h.CPUs)
}
