package verdict

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "ready-in-every-zone",
		Title: "Every zone keeps ready endpoints throughout the load",
		Doc: "Each zone (topology.kubernetes.io/zone) of the nodes the target can run on keeps at least min ready endpoints " +
			"at every moment of the load, so losing one zone never withdraws every backend. The zones are the recorded " +
			"placement's (the schedulable nodes whose taints the pods tolerate, read when the run starts); an endpoint's zone " +
			"is its EndpointSlice's, else its node's. With fewer than two zones there is nothing to spread across: INCONCLUSIVE.",
		Params: []ParamSpec{
			{Name: "min", Kind: KindInt, Default: "1", Doc: "the least number of ready endpoints allowed in each zone (0 is refused)",
				Vacuous: vacuousAt("an empty zone still has at least 0")},
		},
		Needs: NeedsEndpoints,
		Judge: judgeReadyInEveryZone,
	})
}

func judgeReadyInEveryZone(in Input) Result {
	need := in.Params.Int("min", 1)
	r := Result{Status: Pass, Expected: fmt.Sprintf("≥ %d ready endpoints in every zone at every moment of the load", need)}
	load, ok := in.loadSpan()
	if !ok {
		r.nothingToJudge("no load on the timeline: nothing to judge")
		return r
	}
	nodes, ok := placement(in.Entries)
	if !ok {
		r.nothingToJudge("the timeline records no placement (the nodes the target can run on): the zones are unknown")
		return r
	}
	zoneOf := map[string]string{}
	var zones, unzoned []string
	for _, n := range nodes {
		if n.Zone == "" {
			unzoned = append(unzoned, n.Node)
			continue
		}
		zoneOf[n.Node] = n.Zone
		if !slices.Contains(zones, n.Zone) {
			zones = append(zones, n.Zone)
		}
	}
	slices.Sort(zones)
	if len(zones) < 2 {
		r.nothingToJudge(fmt.Sprintf("the %d nodes the target can run on span %d zone(s) %v (%d without a topology.kubernetes.io/zone label): nothing to spread across",
			len(nodes), len(zones), zones, len(unzoned)))
		return r
	}
	podZone := endpointZones(in.Entries, zoneOf)
	eps := buildEndpoints(in.Entries)
	r.window("ready endpoints ≥ min in every zone", "", load.Start, load.End, r.Expected)

	// Each zone's ready pods as a step function over the load.
	type step struct {
		readyStep
		byZone map[string][]string
	}
	var steps []step
	for _, s := range eps.readyOver(load) {
		byZone := map[string][]string{}
		for _, p := range s.Ready {
			if z := podZone[p]; z != "" {
				byZone[z] = append(byZone[z], p)
			}
		}
		steps = append(steps, step{s, byZone})
	}
	var observed []string
	lowestAll := -1
	var belowAll time.Duration
	for _, z := range zones {
		lowest := len(steps[0].byZone[z])
		var below, longest time.Duration
		dips := 0
		for i := 0; i < len(steps); i++ {
			n := len(steps[i].byZone[z])
			lowest = min(lowest, n)
			if n >= need {
				continue
			}
			// A dip: this step and every following one still below.
			j := i
			for j+1 < len(steps) && len(steps[j+1].byZone[z]) < need {
				j++
				lowest = min(lowest, len(steps[j].byZone[z]))
			}
			end := load.End
			if j+1 < len(steps) {
				end = steps[j+1].T
			}
			d := end - steps[i].T
			below += d
			longest = max(longest, d)
			dips++
			r.failAt(steps[i].T)
			ready := strings.Join(steps[i].byZone[z], ", ")
			if ready == "" {
				ready = "none"
			}
			if steps[i].Pod == "" {
				r.add(atTime(steps[i].T, "zone %s: %d ready (%s) when the load started, for %s", z, n, ready, dur(d)))
			} else {
				r.add(atEntry(steps[i].T, steps[i].Seq, "zone %s: %d ready (%s) after %s's endpoint changed, for %s", z, n, ready, steps[i].Pod, dur(d)))
			}
			i = j
		}
		if lowestAll < 0 || lowest < lowestAll {
			lowestAll = lowest
		}
		belowAll += below
		w := fmt.Sprintf("%s lowest %d", z, lowest)
		if dips > 0 {
			w += fmt.Sprintf(" (below %d for %s in %d dips, longest %s)", need, dur(below), dips, dur(longest))
		}
		observed = append(observed, w)
	}
	r.Observed = strings.Join(observed, "; ")
	if len(unzoned) > 0 {
		r.Observed += fmt.Sprintf("; nodes without a zone, counted in none: %s", strings.Join(unzoned, ", "))
	}
	r.figure("zones", float64(len(zones)))
	r.figure("min_ready_in_a_zone", float64(lowestAll))
	r.measure("lowest ready endpoints in a zone", "endpoints", AtLeast, float64(lowestAll), float64(need))
	r.figure("below_min_s", secs(belowAll))
	return r
}

// placement returns the nodes the last workload entry says the target's pods could run on.
func placement(entries []timeline.Entry) ([]timeline.NodeZone, bool) {
	var nodes []timeline.NodeZone
	found := false
	for _, e := range entries {
		if e.Kind == timeline.KindWorkload && e.Workload != nil && len(e.Workload.Nodes) > 0 {
			nodes, found = e.Workload.Nodes, true
		}
	}
	return nodes, found
}

// endpointZones maps each endpoint (by pod, as EndpointHistory keys them) to its zone: the one its
// EndpointSlice names, else its node's in zoneOf.
func endpointZones(entries []timeline.Entry, zoneOf map[string]string) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		if e.Kind != timeline.KindEndpoint || e.Endpoint == nil {
			continue
		}
		z := e.Endpoint.Zone
		if z == "" {
			z = zoneOf[e.Endpoint.Node]
		}
		if z != "" {
			out[timeline.EndpointKey(e)] = z
		}
	}
	return out
}
