package reportstest

import (
	"fmt"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/internal/verdict/verdicttest"
	"github.com/probegate/probegate/reports"
)

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func ptr(d time.Duration) *time.Duration { return &d }

// Pods of the synthetic target.
const (
	PodA = "target-7d9f-a1b2c"
	PodB = "target-7d9f-d3e4f"
	PodC = "target-7d9f-g5h6i"
	PodD = "target-7d9f-j7k8l" // PodB's replacement in PodDelete
)

// DBSlowLiveness is a failing scenario: three pods whose liveness probe checks the shared
// database; toxiproxy adds 3 s of latency from 40 s to 80 s, every liveness probe fails, all three
// containers restart and every endpoint is withdrawn at once. The load runs from 5 s to 125 s at
// rps requests per second.
func DBSlowLiveness(rps int) reports.ScenarioReport {
	b := New()
	b.Mark(0, "start")
	for i, p := range []string{PodA, PodB, PodC} {
		b.NotReady(sec(0.2+0.1*float64(i)), p)
		b.Ready(sec(1.5+0.3*float64(i)), p)
	}
	b.Mark(sec(5), "load-on")
	b.Fault(sec(40), "db-latency", "postgres-3s", timeline.FaultInject, "toxiproxy/postgres")
	// Readiness (dependency budget) and liveness both fail while the DB is slow.
	var firstRestart, lastReady timeline.Entry
	for i, p := range []string{PodA, PodB, PodC} {
		off := 0.4 * float64(i)
		b.ProbeFailure(sec(42+off), p, timeline.ProbeReadiness)
		b.ProbeFailure(sec(43+off), p, timeline.ProbeLiveness)
		b.ProbeFailure(sec(44+off), p, timeline.ProbeReadiness)
		b.ProbeFailure(sec(45+off), p, timeline.ProbeLiveness)
		lastReady = b.NotReady(sec(44.6+off), p)
		if r := b.Restart(sec(47+off), p, 1, timeline.CauseLiveness); i == 0 {
			firstRestart = r
		}
		// Restarted, the app starts again but its readiness still waits on the slow DB.
		b.ProbeFailure(sec(55+off), p, timeline.ProbeLiveness)
		b.ProbeFailure(sec(57+off), p, timeline.ProbeLiveness)
		b.Restart(sec(59+off), p, 2, timeline.CauseLiveness)
	}
	b.Fault(sec(80), "db-latency", "postgres-3s", timeline.FaultRevert, "toxiproxy/postgres")
	for i, p := range []string{PodA, PodB, PodC} {
		b.Ready(sec(83+0.5*float64(i)), p)
	}
	b.Load(sec(5), sec(125), rps, func(t time.Duration, pod string) (timeline.ErrorClass, int, time.Duration) {
		if t >= sec(40) && t < sec(80) {
			if t.Milliseconds()%7 == 0 {
				return timeline.ErrHTTP5xx, 503, 3 * time.Second
			}
			return timeline.ErrNone, 200, 3*time.Second + time.Duration(t.Milliseconds()%40)*time.Millisecond
		}
		return Steady(t, pod)
	})
	b.Mark(sec(126), "end")

	oracle := verdicttest.DefaultOracle()
	return reports.ScenarioReport{
		Name:        "db-slow",
		Description: "the shared database answers 3 s late for 40 s",
		Variant:     "bad-liveness-db",
		Target:      "probegate/target:dev",
		Namespace:   "pg-db-slow-1",
		Seed:        42,
		Started:     Start,
		Finished:    Start.Add(sec(126)),
		Replay:      "probegate run --scenario db-slow --variant bad-liveness-db --seed 42",
		Oracle:      &oracle,
		Verdicts: []verdict.Result{
			{Rule: "liveness-ignores-shared-dependency", Title: "liveness never fails because the shared database is slow",
				Status: verdict.Fail, Expected: "0 liveness restarts while only the shared database is faulty (40 s–80 s)",
				Observed: "6 liveness restarts (3 pods), first at +47.0 s", At: ptr(sec(47)),
				Evidence: []verdict.Evidence{{T: firstRestart.T, Seq: firstRestart.Seq, Note: "restart " + PodA + " cause liveness"}},
				Figures:  map[string]float64{"restarts": 6},
				Measure:  &verdict.Measure{Name: "liveness restarts", Value: 6, Unit: "restarts", Bound: 0, Direction: verdict.AtMost}},
			{Rule: "never-withdraw-all", Title: "a shared outage never withdraws every backend",
				Status: verdict.Fail, Expected: "at least 1 ready endpoint at all times",
				Observed: "0 ready endpoints for 37.8 s from +45.4 s", At: ptr(lastReady.T),
				Evidence: []verdict.Evidence{{T: lastReady.T, Seq: lastReady.Seq, Note: "last ready endpoint withdrawn: " + PodC}},
				Figures:  map[string]float64{"zeroReadySeconds": 37.8}},
			{Rule: "readiness-withdraws-on-dependency", Title: "readiness withdraws within the detection window",
				Status: verdict.Pass, Expected: "endpoint ready=false within [41.0 s, 45.0 s]",
				Observed: "first withdrawal at +44.6 s", Figures: map[string]float64{"detectionSeconds": 4.6},
				Measure: &verdict.Measure{Name: "readiness withdrawal after the fault", Value: 4.6, Unit: "s", Bound: 5, Direction: verdict.AtMost},
				Windows: []verdict.Window{{Name: "readiness detection", From: sec(41), To: sec(45),
					Basis: "fault 40 s + [(F−1)·P, F·P+timeout] = [1 s, 3 s] + 2 s propagation"}}},
			{Rule: "cooperative-drain", Title: "in-flight requests drain before exit",
				Status: verdict.Inconclusive, Expected: "no request reset during shutdown", Observed: "not judged: fault skipped",
				Unshown: []string{"pod-delete was skipped: the target has no second replica"}},
		},
		Timeline: b.TL,
		Requests: b.Requests,
	}
}

// PodDelete is a passing scenario: PodB is deleted at 40 s; its endpoint drains (terminating,
// serving) and goes away, its replacement PodD becomes ready, and no request fails.
func PodDelete(rps int) reports.ScenarioReport {
	b := New()
	b.Mark(0, "start")
	for i, p := range []string{PodA, PodB, PodC} {
		b.NotReady(sec(0.2+0.1*float64(i)), p)
		b.Ready(sec(1.5+0.3*float64(i)), p)
	}
	b.Mark(sec(5), "load-on")
	b.Fault(sec(40), "pod-delete", "delete-one", timeline.FaultInject, PodB)
	b.PodDeleted(sec(40.1), PodB, 30)
	b.Draining(sec(40.8), PodB)
	b.NotReady(sec(41.0), PodD)
	b.Ready(sec(42.6), PodD)
	b.Terminating(sec(46.2), PodB)
	b.Removed(sec(46.7), PodB)
	b.Fault(sec(46.7), "pod-delete", "delete-one", timeline.FaultRevert, PodB)
	b.Load(sec(5), sec(65), rps, Steady)
	b.Mark(sec(66), "end")
	return reports.ScenarioReport{
		Name:     "pod-delete",
		Variant:  "good",
		Target:   "probegate/target:dev",
		Seed:     7,
		Started:  Start,
		Finished: Start.Add(sec(66)),
		Verdicts: []verdict.Result{
			{Rule: "deleted-pod-withdrawn", Title: "a deleted pod's endpoint is withdrawn at once",
				Status: verdict.Pass, Expected: "ready=false within [40.0 s, 42.0 s]", Observed: "ready=false at +40.8 s",
				Figures: map[string]float64{"withdrawSeconds": 0.8},
				Measure: &verdict.Measure{Name: "withdrawal after the deletion", Value: 0.8, Unit: "s", Bound: 2, Direction: verdict.AtMost},
				Windows: []verdict.Window{{Name: "withdraw before drain ends", Pod: PodB, From: sec(40), To: sec(42),
					Basis: "delete 40 s + kubelet→EndpointSlice propagation ≤ 2 s"}}},
			{Rule: "no-failed-requests", Title: "no request fails during a graceful delete",
				Status: verdict.Pass, Expected: "0 failed requests", Observed: "0 of 3000 failed"},
		},
		Timeline: b.TL,
		Requests: b.Requests,
	}
}

// SampleReport is a two-scenario run (one failing, one passing) with data attached and summaries
// computed.
func SampleReport(rps int) *reports.Report {
	r := &reports.Report{
		SchemaVersion:     reports.SchemaVersion,
		ProbegateVersion:  "v0.1.0-test",
		KubernetesVersion: "v1.34.4",
		Cluster:           "probegate",
		Started:           Start,
		Finished:          Start.Add(sec(200)),
		Command:           []string{"probegate", "run", "--suite", "default"},
		Scenarios:         []reports.ScenarioReport{DBSlowLiveness(rps), PodDelete(rps)},
	}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		sum := reports.Summarise(s.Timeline.Entries(), s.Requests)
		s.Summary = &sum
	}
	return r
}

// Judge replaces the scenario's verdicts with those of the real verdict rules named by specs,
// judged on its timeline and requests against its oracle (verdicttest.DefaultOracle when nil).
func Judge(sc *reports.ScenarioReport, specs ...verdict.Spec) error {
	o := verdicttest.DefaultOracle()
	if sc.Oracle != nil {
		o = *sc.Oracle
	}
	in := verdict.Input{Entries: sc.Timeline.Entries(), Requests: sc.Requests, Oracle: o}
	res := make([]verdict.Result, 0, len(specs))
	for _, s := range specs {
		r, err := verdict.Evaluate(in, s)
		if err != nil {
			return err
		}
		res = append(res, r)
	}
	sc.Verdicts = res
	return nil
}

// TenMinutes is a 3-pod, 10-minute run at rps requests per second with a 20 s database fault
// every two minutes, during which one pod (in turn) goes not ready for 2 s and restarts once.
func TenMinutes(rps int) reports.ScenarioReport {
	b := New()
	pods := []string{PodA, PodB, PodC}
	for i, p := range pods {
		b.NotReady(sec(0.2+0.1*float64(i)), p)
		b.Ready(sec(2+0.5*float64(i)), p)
	}
	for k := 0; k < 5; k++ {
		at := float64(60 + 120*k)
		victim := pods[k%len(pods)]
		b.Fault(sec(at), "db-latency", fmt.Sprintf("slow-%d", k), timeline.FaultInject, "toxiproxy/postgres")
		b.ProbeFailure(sec(at+2), victim, timeline.ProbeReadiness)
		b.NotReady(sec(at+3), victim)
		b.Ready(sec(at+5), victim)
		b.ProbeFailure(sec(at+8), victim, timeline.ProbeLiveness)
		b.Restart(sec(at+10), victim, int32(k/len(pods)+1), timeline.CauseLiveness)
		b.Fault(sec(at+20), "db-latency", fmt.Sprintf("slow-%d", k), timeline.FaultRevert, "toxiproxy/postgres")
	}
	b.Load(sec(5), sec(600), rps, Steady)
	b.Mark(sec(601), "end")
	return reports.ScenarioReport{
		Name: "db-slow-long", Variant: "good", Target: "probegate/target:dev", Seed: 3,
		Started: Start, Finished: Start.Add(sec(601)),
		Verdicts: []verdict.Result{{Rule: "no-liveness-restarts", Title: "no liveness restarts", Status: verdict.Fail,
			Expected: "0 liveness restarts", Observed: "5 liveness restarts", At: ptr(sec(70))}},
		Timeline: b.TL, Requests: b.Requests,
	}
}
