package timeline

import (
	"net/netip"
)

// How a request's pod was learnt (Request.PodFrom).
const (
	PodFromHeader    = "header"    // the response named it
	PodFromConntrack = "conntrack" // the node's conntrack entry for the request's connection
	// A front door that keeps its own record names the pod by its kind ("ingress"): the
	// controller's access log named the address it sent the request to.
)

// MinAttributionCoverage is the share of requests that reached a pod which must name their pod
// for the rules that read per-pod traffic to be judged.
const MinAttributionCoverage = 0.99

// MaxAttributionDisagreement is the largest share of attributed requests whose connection conntrack
// traced to another pod than the header named, for the rules that read per-pod traffic to be judged.
const MaxAttributionDisagreement = 0.01

// PodNames is the set of pods a run's timeline saw, by timeline key and by Kubernetes name.
type PodNames map[string]bool

// RunPods collects the pods of the run: those of its pod and endpoint entries.
func RunPods(entries []Entry) PodNames {
	out := PodNames{}
	for _, e := range entries {
		if e.Pod != "" && (e.Kind == KindPod || e.Kind == KindEndpoint) {
			out[e.Pod], out[PodName(e.Pod)] = true, true
		}
	}
	return out
}

// Names reports whether pod, as a request names it, is a pod of the run.
func (p PodNames) Names(pod string) bool { return p[pod] }

// Reached reports whether the request is known to have reached a pod: it got a response, names
// its pod, or opened a connection straight to the node's NodePort (kube-proxy DNATs such a
// connection to a pod; a refused one opens none). A connection to a loopback address proves
// nothing: Docker's userland proxy accepts it even when nothing is behind the port.
func (r Request) Reached() bool {
	if r.NoUpstream {
		return false // the front door answered it: no pod was asked
	}
	if r.Status != 0 || r.Pod != "" {
		return true
	}
	ap, err := netip.ParseAddrPort(r.Conn)
	return err == nil && !ap.Addr().IsLoopback()
}

// Attribution sums up how many of a run's requests name the pod that served them.
type Attribution struct {
	Requests int `json:"requests"`
	// Reached counts requests that reached a pod (Request.Reached); the others (refused, no
	// connection) are left out of the coverage.
	Reached    int `json:"reached"`
	Attributed int `json:"attributed"` // reached requests that name their pod
	ByHeader   int `json:"byHeader"`
	// ByConntrack counts requests whose pod came from conntrack (no header named it).
	ByConntrack int `json:"byConntrack"`
	// ByDoor counts requests whose pod came from the front door's own record (no header named it).
	ByDoor int `json:"byDoor,omitempty"`
	// Coverage is Attributed ÷ Reached (1 when nothing reached a pod).
	Coverage float64 `json:"coverage"`
	// Conntrack, when the run looked up connections in the node's conntrack table, counts the
	// requests conntrack attributed whatever the header said, and how often it agreed with it.
	Conntrack *ConntrackAttribution `json:"conntrack,omitempty"`
	// Door, when the load went through a front door that keeps its own record, counts the
	// requests it attributed and how often it agreed with the header.
	Door *DoorAttribution `json:"door,omitempty"`
}

// DoorAttribution compares a front door's attribution (its access log's upstream address of each
// request) with the response header's.
type DoorAttribution struct {
	Door string `json:"door"` // its kind ("ingress")
	// Lines counts the record's lines of this load; Found the reached requests matched to a line
	// whose upstream address names a pod of the run, Coverage Found ÷ Reached.
	Lines    int     `json:"lines"`
	Found    int     `json:"found"`
	Coverage float64 `json:"coverage"`
	// NoUpstream counts requests the door answered itself (no server); Retried those it sent to
	// more than one server before the answer.
	NoUpstream int `json:"noUpstream"`
	Retried    int `json:"retried"`
	// UnknownAddresses counts matched lines whose upstream address no pod of the run had.
	UnknownAddresses int `json:"unknownAddresses,omitempty"`
	// Compared, Agreed, Agreement and Disagreed: as ConntrackAttribution's, against the header.
	Compared  int      `json:"compared"`
	Agreed    int      `json:"agreed"`
	Agreement float64  `json:"agreement"`
	Disagreed []string `json:"disagreed,omitempty"`
}

// ConntrackAttribution compares conntrack's attribution with the response header's.
type ConntrackAttribution struct {
	// Flows is how many connections to the target's NodePort conntrack recorded.
	Flows int `json:"flows"`
	// Found counts reached requests whose connection conntrack mapped to a pod; Coverage is Found
	// ÷ Reached: the coverage conntrack alone gives, as for an app that sends no header.
	Found    int     `json:"found"`
	Coverage float64 `json:"coverage"`
	// Compared counts requests attributed by both the header and conntrack; Agreed those where they
	// named the same pod, Agreement is Agreed ÷ Compared (1 when none was compared).
	Compared  int     `json:"compared"`
	Agreed    int     `json:"agreed"`
	Agreement float64 `json:"agreement"`
	// Disagreed lists up to ten disagreements, "seq N: header A, conntrack B".
	Disagreed []string `json:"disagreed,omitempty"`
}

// AttributionOf counts how many of reqs name their pod. Conntrack is left nil.
func AttributionOf(reqs []Request) Attribution {
	a := Attribution{Requests: len(reqs)}
	for _, q := range reqs {
		if !q.Reached() {
			continue
		}
		a.Reached++
		if q.Pod == "" {
			continue
		}
		a.Attributed++
		switch q.PodFrom {
		case PodFromConntrack:
			a.ByConntrack++
		case PodFromHeader, "":
			a.ByHeader++
		default:
			a.ByDoor++
		}
	}
	a.Coverage = ratio(a.Attributed, a.Reached)
	return a
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 1
	}
	return float64(n) / float64(d)
}
