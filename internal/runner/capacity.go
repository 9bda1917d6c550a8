package runner

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/maxrate"
	"github.com/probegate/probegate/internal/pause"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/reports"
)

// Capacity search: before the load of a scenario whose overload names a multiple of the target's
// capacity, the runner measures that capacity on the scenario's own request: short constant-rate
// steps up a ladder (maxrate.Search), a step held when nearly every request it planned was sent on
// time and answered OK within capacityKnee, from twice the scenario's own rate. The capacity is the highest rate held. A step the
// harness itself could not send on time says nothing about the target: the search stops there, and
// the capacity is only known to be at least the last rate held ("not saturated").
const (
	capacityStep      = 2 * time.Second
	capacityBudget    = 45 * time.Second
	capacityThreshold = 0.95
	// capacityKnee is how long an answer may take and still count as served: past it the target
	// queues instead of serving.
	capacityKnee = time.Second
	// capacitySettle bounds the wait, after the search, for every endpoint to be ready again.
	capacitySettle = 60 * time.Second
	// capacityMax is the highest rate the search tries and an overload asks for: every request of a
	// run is kept, attributed and judged, and at 5760/s for 40 s (etcd's /health) that took the
	// harness 4 GB and minutes after the load. A target that serves this much is reported not
	// saturated (its overload verdicts INCONCLUSIVE, saying so), not loaded harder.
	capacityMax = 2000
)

// overloadRate is the rate an overload at multiple × capacity asks for. When the harness itself
// fell behind before the target did, the target held every rate the harness could send: the
// overload asks for the highest of them (the saturation guard then says the target was not
// saturated, rather than the harness failing its own schedule).
func overloadRate(c reports.Capacity, multiple float64) float64 {
	r := math.Ceil(multiple * c.Rate)
	if c.HarnessLimit > 0 {
		r = min(r, c.Rate)
	}
	return max(min(r, capacityMax), 1)
}

// sizeOverloads measures the target's capacity when an overload of the scenario names a multiple
// of it, and returns the scenario with those overloads' rates set (nil when none asks).
func (s *scenarioRun) sizeOverloads(ctx context.Context, path string) (*scenario.Scenario, error) {
	idx := slices.IndexFunc(s.sc.Faults, func(f scenario.Fault) bool {
		_, ok := f.Params[faults.ParamCapacityMultiple]
		return f.Type == faults.TypeOverload && ok
	})
	if idx < 0 {
		return nil, nil
	}
	s.phase = "capacity"
	s.mark(reports.MarkCapacitySearch, "measuring the target's capacity on "+path)
	c, err := s.searchCapacityWithin(ctx, path, maxMultiple(s.sc.Faults))
	if err != nil {
		return nil, fmt.Errorf("capacity search: %w", err)
	}
	s.rep.Capacity = &c
	s.log.Info("capacity measured", "capacity", c.String())
	s.tl.Append(capacityEntry(c))
	s.mark(reports.MarkCapacity, c.String())
	if err := s.waitAllReady(ctx); err != nil {
		s.log.Warn("after the capacity search", "err", err)
	}
	out := *s.sc
	out.Faults = slices.Clone(s.sc.Faults)
	for i, f := range out.Faults {
		m, ok := f.Params[faults.ParamCapacityMultiple]
		if f.Type != faults.TypeOverload || !ok {
			continue
		}
		mult, _ := strconv.ParseFloat(m, 64)
		f.Params = maps.Clone(f.Params)
		f.Params["rate"] = strconv.FormatFloat(overloadRate(c, mult), 'f', 0, 64)
		f.Params[faults.ParamCapacity] = strconv.FormatFloat(c.Rate, 'f', 0, 64)
		out.Faults[i] = f
		s.log.Info("overload sized to the target", "fault", fmt.Sprintf("faults[%d]", i), "multiple", m, "rate", f.Params["rate"])
	}
	return &out, nil
}

// capacityEntry is the timeline's record of the capacity measured: sheds-excess-load judges the
// overload's goodput against it.
func capacityEntry(c reports.Capacity) timeline.Entry {
	return timeline.Entry{Kind: timeline.KindCapacity, Capacity: &timeline.CapacitySearch{
		Rate: c.Rate, Saturated: c.Saturated, HarnessLimit: c.HarnessLimit,
	}}
}

// searchCapacity runs the step search with the scenario's own request; it also returns how many
// requests the search sent.
func (s *scenarioRun) searchCapacity(ctx context.Context, path string) (reports.Capacity, int, error) {
	sc := s.sc
	var c reports.Capacity
	missed := false
	sent := 0
	measure := func(ctx context.Context, rate float64) (maxrate.Step, error) {
		// A step the target missed may have made it shed through readiness: the next step starts
		// from a rested target, or it would measure the recovery.
		var waited time.Duration
		if missed {
			t0 := time.Now()
			if err := s.waitAllReady(ctx); err != nil {
				s.log.Warn("capacity search", "err", err)
			}
			waited = time.Since(t0)
		}
		scratch := timeline.New(time.Now())
		load, err := s.r.kit.load.Start(ctx, s.door.loadSpec(s.attr.loadSpec(loadSpec{
			URL: s.target.URL + path, Namespace: s.target.Namespace, Service: s.target.Service, Path: path,
			Protocol: protocolOf(s.r.Opts.Custom), GRPC: grpcCall(s.r.Opts.Custom),
			Rate: int(rate), Duration: capacityStep, KeepAlive: sc.Load.KeepAlive, Timeout: sc.Load.Timeout,
			Clients: sc.Load.Clients, IgnorePodHeader: true,
		})), scratch)
		if err != nil {
			return maxrate.Step{}, err
		}
		reqs, err := waitLoad(ctx, load)
		if err != nil {
			return maxrate.Step{}, err
		}
		sent += len(reqs)
		recs := make([]maxrate.Record, len(reqs))
		for i, r := range reqs {
			recs[i] = maxrate.Record{Start: r.Start, OK: r.OK() && r.Latency <= capacityKnee}
		}
		st := maxrate.Fidelity(recs, rate, capacityStep, 1, maxrate.DefaultMaxLag)
		// The harness fell behind its own schedule: the step says nothing about the target.
		if st.Planned > 0 && float64(st.OnTime)/float64(st.Planned) < capacityThreshold && (c.HarnessLimit == 0 || rate < c.HarnessLimit) {
			c.HarnessLimit = rate
			st.Note = "the harness fell behind its schedule"
		}
		st.Waited = waited
		missed = st.Fidelity < capacityThreshold
		return st, nil
	}
	opts := capacityOptions(sc.Load.Rate)
	opts.OnStep = func(st maxrate.Step) { s.log.Info("capacity step", "step", st.String()) }
	res, err := maxrate.Search(ctx, opts, measure)
	if err != nil {
		return c, sent, err
	}
	c.Rate = res.Held
	for _, st := range res.Steps {
		c.Steps = append(c.Steps, st.String())
	}
	// Saturated: a rate above the capacity was missed by the target, the harness keeping up.
	c.Saturated = res.Missed > 0 && (c.HarnessLimit == 0 || res.Missed < c.HarnessLimit)
	if c.HarnessLimit > 0 && c.HarnessLimit <= res.Held {
		c.HarnessLimit = 0 // a retried step that held after all
	}
	return c, sent, nil
}

// capacityOptions is the step search for a scenario whose own load runs at rate: the ladder starts
// one step above it. A missed step is measured once more, from a rested target, before it bounds
// the capacity: one hiccup (a GC pause, a busy node) on a low step would otherwise size the
// overload below what the target serves, and its verdicts would show nothing.
func capacityOptions(rate int) maxrate.Options {
	return maxrate.Options{
		Start: float64(2 * max(rate, 10)), Min: 1, Max: capacityMax, Factor: 2, Threshold: capacityThreshold, Resolution: 0.25,
		Budget: capacityBudget, StepCost: capacityStep + 2*time.Second, Retries: 1,
	}
}

// waitAllReady waits (up to capacitySettle) until every endpoint of the target Service is ready:
// the search may have made the target shed load through readiness.
func (s *scenarioRun) waitAllReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, capacitySettle)
	defer cancel()
	sel := discoveryv1.LabelServiceName + "=" + s.target.Service
	for {
		list, err := s.r.Conn.Client.DiscoveryV1().EndpointSlices(s.target.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err == nil {
			total, ready := 0, 0
			for _, sl := range list.Items {
				for _, ep := range sl.Endpoints {
					total++
					if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
						ready++
					}
				}
			}
			if total > 0 && ready == total {
				return nil
			}
		}
		if pause.For(ctx, 500*time.Millisecond) != nil {
			return fmt.Errorf("not every endpoint ready again within %s", capacitySettle)
		}
	}
}
