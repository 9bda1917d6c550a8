package tune

import (
	"fmt"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

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

// recommendReadinessTimeout: timeoutSeconds ≥ the health handler's p99 latency under load and
// fault. probegate does not record that latency today, so the field is always left alone; probe
// timeouts kubelet reported are shown as what little the runs do say.
func recommendReadinessTimeout(g *group) Recommendation {
	st := g.settings
	rec := Recommendation{Field: "readinessProbe.timeoutSeconds", Status: LeftAlone, Current: "n/a"}
	if st.Oracle.Readiness == nil {
		rec.Why = "the container has no readiness probe"
		return rec
	}
	rd := st.Oracle.Readiness.Probe
	rec.Current = fmt.Sprint(int64(rd.Timeout / time.Second))
	rec.Formula = "timeoutSeconds ≥ p99 of the readiness handler's latency under load and fault"
	rec.Why = "the readiness handler's latency is not recorded: requests.jsonl times the load's own path, and kubelet reports only failed probes"
	for _, s := range g.scenarios {
		rec.Evidence = append(rec.Evidence, readinessTimedOut(s)...)
	}
	if len(rec.Evidence) > 0 {
		rec.Why += fmt.Sprintf("; kubelet reported %d readiness timeouts (each says the handler took over %s, not how long)", len(rec.Evidence), secs(rd.Timeout))
	}
	rec.Supply = "none today: needs a recorded probe-latency observer (the handler timed from the node under load and fault, e.g. in overload and db-slowness)"
	return rec
}
