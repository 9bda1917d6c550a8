package conntrack

import (
	"fmt"
	"net/netip"
	"sort"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// flowSlack: a flow is the one a request went over if it was seen no later than this after the
// request completed (conntrack reports a flow when its SYN passes, before the response). An
// endpoint address names its pod with timeline.WatchLag of slack (AddressBook.PodAt).
const flowSlack = time.Second

// maxDisagreements bounds the examples kept in ConntrackAttribution.Disagreed.
const maxDisagreements = 10

// Attribute returns a copy of reqs in which every request that names no pod but went over a
// connection conntrack recorded names the pod it was DNAT'd to (PodFrom "conntrack"), every request
// whose header named another pod than that carries conntrack's in ConntrackPod, and the
// comparison of conntrack's attribution with the header's. entries supply the pod of each endpoint
// address over time (EndpointSlice entries).
func Attribute(reqs []timeline.Request, flows []Flow, entries []timeline.Entry) ([]timeline.Request, timeline.ConntrackAttribution) {
	byClient := map[netip.AddrPort][]Flow{}
	for _, f := range flows {
		byClient[f.Client] = append(byClient[f.Client], f)
	}
	for _, fs := range byClient {
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].At.Before(fs[j].At) })
	}
	pods := timeline.Addresses(entries)
	sum := timeline.ConntrackAttribution{Flows: len(flows)}
	out := make([]timeline.Request, len(reqs))
	for i, q := range reqs {
		out[i] = q
		if !q.Reached() {
			continue
		}
		pod := podOf(q, byClient, pods)
		if pod == "" {
			continue
		}
		sum.Found++
		switch {
		case q.Pod == "":
			out[i].Pod, out[i].PodFrom = pod, timeline.PodFromConntrack
		case q.Pod == pod:
			sum.Compared++
			sum.Agreed++
		default:
			sum.Compared++
			out[i].ConntrackPod = pod
			if len(sum.Disagreed) < maxDisagreements {
				sum.Disagreed = append(sum.Disagreed, fmt.Sprintf("seq %d: header %s, conntrack %s", q.Seq, q.Pod, pod))
			}
		}
	}
	reached := 0
	for _, q := range reqs {
		if q.Reached() {
			reached++
		}
	}
	sum.Coverage = ratio(sum.Found, reached)
	sum.Agreement = ratio(sum.Agreed, sum.Compared)
	return out, sum
}

// podOf is the pod request q's connection was DNAT'd to, "" when unknown: the latest flow from
// q's local address seen by the time q completed (a kept-alive connection was opened before the
// request; a client port may be reused by a later connection), else an untimed flow from a table
// listing; then the pod that had the flow's backend address at the time.
func podOf(q timeline.Request, byClient map[netip.AddrPort][]Flow, pods timeline.AddressBook) string {
	client, err := netip.ParseAddrPort(q.Conn)
	if err != nil {
		return ""
	}
	end := q.Start.Add(q.Latency + flowSlack)
	var flow *Flow
	for i, f := range byClient[client] {
		switch {
		case f.At.IsZero():
			if flow == nil {
				flow = &byClient[client][i]
			}
		case !f.At.After(end):
			flow = &byClient[client][i]
		}
	}
	if flow == nil {
		return ""
	}
	return pods.PodAt(flow.Backend.Addr(), q.T)
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 1
	}
	return float64(n) / float64(d)
}
