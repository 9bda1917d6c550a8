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
		pod, flow := podOf(q, byClient, pods)
		if pod == "" {
			continue
		}
		out[i].FlowAt = flow.At
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

// dialWindow bounds how long after its dial began a connection's NEW flow is reported: the first
// SYN creates the flow as it passes the node (a dial that waited for a CPU can send it late), and
// the listener receives the event after that.
const dialWindow = 3 * time.Second

// clockSlack is how much earlier than the dial's start a flow's report may read: the node's
// listener and the load generator read the same host clock, at different moments.
const clockSlack = 50 * time.Millisecond

// podOf is the pod request q's connection was DNAT'd to, "" when unknown, and the flow it used.
// A request whose connection's opening the load generator recorded (ConnAt, when the dial began)
// takes the timed flow from its local address reported nearest after that opening, within
// dialWindow + flowSlack: a client port is reused by later connections, and the flow of an earlier connection on the
// same port names whichever pod that one went to. Without a timed flow there, an untimed flow from
// the table listing counts only when no timed flow came from the port at all; else the request is
// left unattributed rather than tied to another connection's pod. A request without ConnAt takes the
// latest flow from its local address seen by the time it completed (a kept-alive connection was
// opened before the request), else an untimed flow. The pod is the one that had the flow's backend
// address at the time.
func podOf(q timeline.Request, byClient map[netip.AddrPort][]Flow, pods timeline.AddressBook) (string, *Flow) {
	client, err := netip.ParseAddrPort(q.Conn)
	if err != nil {
		return "", nil
	}
	fs := byClient[client]
	var flow, untimed *Flow
	timed := false
	if opened := q.ConnAt; !opened.IsZero() {
		for i, f := range fs {
			switch {
			case f.At.IsZero():
				if untimed == nil {
					untimed = &fs[i]
				}
			default:
				timed = true
				if f.At.Before(opened.Add(-clockSlack)) || f.At.After(opened.Add(dialWindow+flowSlack)) {
					continue
				}
				if flow == nil || absDur(f.At.Sub(opened)) < absDur(flow.At.Sub(opened)) {
					flow = &fs[i]
				}
			}
		}
		if flow == nil && !timed {
			flow = untimed
		}
	} else {
		end := q.Start.Add(q.Latency + flowSlack)
		for i, f := range fs {
			switch {
			case f.At.IsZero():
				if flow == nil {
					flow = &fs[i]
				}
			case !f.At.After(end):
				flow = &fs[i]
			}
		}
	}
	if flow == nil {
		return "", nil
	}
	return pods.PodAt(flow.Backend.Addr(), q.T), flow
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 1
	}
	return float64(n) / float64(d)
}
