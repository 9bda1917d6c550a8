package tune

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// readinessMargin multiplies the measured p99 of the readiness handler's latency.
const readinessMargin = 1.5

// readinessTimedOut are the readiness probe failures of the container that were timeouts, as
// kubelet's Unhealthy events report them (aggregated: a count, not every probe).
func readinessTimedOut(s *scenarioRun) []Evidence {
	var out []Evidence
	for _, e := range s.entries {
		if e.Kind != timeline.KindProbe || e.Probe == nil || e.Probe.Probe != timeline.ProbeReadiness ||
			(e.Probe.Container != "" && e.Probe.Container != s.settings.Container) {
			continue
		}
		m := strings.ToLower(e.Probe.Message)
		if strings.Contains(m, "timeout") || strings.Contains(m, "deadline exceeded") || strings.Contains(m, "timed out") {
			out = append(out, s.evidence(e.Pod, e.T, e.T, e.Seq, "readiness probe timed out at %s (seq %d, event count %d): %s", at(e.T), e.Seq, e.Probe.Count, e.Probe.Message))
		}
	}
	return out
}

// latency merges kubelet's readiness-probe histograms of the container over a run's pods.
type latency struct {
	bounds []string         // bucket bounds in kubelet's order
	counts map[string]int64 // cumulative count per bound
}

func (l *latency) add(b []timeline.LatencyBucket) {
	if l.counts == nil {
		l.counts = map[string]int64{}
	}
	for _, x := range b {
		if _, ok := l.counts[x.Le]; !ok {
			l.bounds = append(l.bounds, x.Le)
		}
		l.counts[x.Le] += x.Count
	}
}

// total is the number of probes (the +Inf bucket).
func (l *latency) total() int64 { return l.counts["+Inf"] }

// quantile is the smallest bucket bound (seconds; +Inf as math.Inf) that at least q of the probes
// stayed within.
func (l *latency) quantile(q float64) float64 {
	need := int64(math.Ceil(q * float64(l.total())))
	for _, b := range l.bounds {
		if l.counts[b] >= need {
			if b == "+Inf" {
				return math.Inf(1)
			}
			v, err := strconv.ParseFloat(b, 64)
			if err == nil {
				return v
			}
		}
	}
	return math.Inf(1)
}

// readinessLatency adds the container's readiness-probe histograms of a run to all and returns the
// run's evidence line (none when the run recorded none).
func readinessLatency(s *scenarioRun, all *latency) []Evidence {
	l := &latency{}
	pods := 0
	var last timeline.Entry
	for _, e := range s.entries {
		if e.Kind != timeline.KindProbeLatency || e.Latency == nil || e.Latency.Probe != timeline.ProbeReadiness ||
			e.Latency.Container != s.settings.Container {
			continue
		}
		l.add(e.Latency.Buckets)
		all.add(e.Latency.Buckets)
		pods++
		last = e
	}
	if l.total() == 0 {
		return nil
	}
	ev := s.evidence("", last.T, last.T, last.Seq, "kubelet's prober_probe_duration_seconds of %d readiness probes of %d pods (seq %d): 99%% within %s s, the slowest bucket used %s",
		l.total(), pods, last.Seq, bound(l.quantile(0.99)), bound(l.quantile(1)))
	return []Evidence{ev}
}

func bound(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// recommendReadinessTimeout: timeoutSeconds ≥ the readiness handler's p99 latency under load and
// fault × margin, from kubelet's own histogram of the probes' durations. A p99 at or above the
// current timeout is censored (kubelet stops a probe at its timeout): the timeout is then at least
// doubled, and tune --verify measures again.
func recommendReadinessTimeout(g *group) Recommendation {
	st := g.settings
	rec := Recommendation{Field: "readinessProbe.timeoutSeconds", Status: LeftAlone, Current: "n/a"}
	if st.Oracle.Readiness == nil {
		rec.Why = "the container has no readiness probe"
		return rec
	}
	rd := st.Oracle.Readiness.Probe
	current := int64(rd.Timeout / time.Second)
	rec.Current = fmt.Sprint(current)
	rec.Formula = "timeoutSeconds ≥ p99 of the readiness handler's latency under load and fault × 1.5"
	all := &latency{}
	timeouts := 0
	for _, s := range g.scenarios {
		rec.Evidence = append(rec.Evidence, readinessLatency(s, all)...)
	}
	for _, s := range g.scenarios {
		ev := readinessTimedOut(s)
		timeouts += len(ev)
		rec.Evidence = append(rec.Evidence, ev...)
	}
	if all.total() == 0 {
		rec.Why = "no run recorded the readiness handler's latency (kubelet's probe-duration histogram, read at each run's end)"
		if timeouts > 0 {
			rec.Why += fmt.Sprintf("; kubelet reported %d readiness timeouts (each says the handler took over %s, not how long)", timeouts, secs(rd.Timeout))
		}
		rec.Supply = "any scenario run by this probegate (it records kubelet's probe durations); overload and db-slowness load the handler most"
		return rec
	}
	p99 := all.quantile(0.99)
	need := int64(math.Ceil(p99 * readinessMargin))
	censored := p99 >= rd.Timeout.Seconds()
	if censored {
		need = max(need, 2*current)
	}
	need = max(need, 1)
	rec.Formula = fmt.Sprintf("timeoutSeconds ≥ p99 of %d readiness probes ≤ %s s (kubelet's bucket) × %.1f = %d s",
		all.total(), bound(p99), readinessMargin, need)
	if censored {
		rec.Formula += fmt.Sprintf("; the p99 bucket reaches the %d s timeout, where kubelet cuts probes off: the true latency is hidden, so at least twice the timeout", current)
	}
	if need <= current {
		rec.Status, rec.Recommended = Keep, rec.Current
		rec.Why = "the readiness handler answered within the timeout with margin under load and fault"
		return rec
	}
	rec.Status, rec.Recommended = Change, fmt.Sprint(need)
	rec.Why = "1 % or more of the readiness probes took nearly as long as the timeout allows: a busy handler fails readiness by its timeout, not by its answer"
	rec.patch = &fieldPatch{container: true, path: []string{"readinessProbe", "timeoutSeconds"}, value: need}
	return rec
}
