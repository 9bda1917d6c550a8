package timeline

import (
	"slices"
	"time"
)

// DoorLag is how long a front door that keeps its own record (an ingress controller) went on
// sending new requests to a pod after the EndpointSlice withdrew it: the controller watches the
// slices itself and balances over its own connections to the pods, so this hop replaces
// kube-proxy's on the load's path. Measured from the door's record of each request's upstream.
type DoorLag struct {
	// Withdrawals counts the withdrawals judged; Late those after which the door still sent the pod
	// a request, and Requests how many such requests it sent.
	Withdrawals int `json:"withdrawals"`
	Late        int `json:"late,omitempty"`
	Requests    int `json:"requests,omitempty"`
	// Median and Max are over the withdrawals: the start of the last request the door sent the pod
	// after its withdrawal, less the withdrawal (0 when it sent none).
	Median time.Duration `json:"median"`
	Max    time.Duration `json:"max"`
}

// ThroughDoor reports whether any request went through a door's record (it named an upstream, or
// said the door answered it itself).
func ThroughDoor(reqs []Request) bool {
	for _, q := range reqs {
		if q.Upstream != "" || q.NoUpstream {
			return true
		}
	}
	return false
}

// MeasureDoorLag measures the door's lag from the requests it attributed (Upstream set) against
// the run's withdrawals; nil when no request went through a door's record or nothing was withdrawn.
func MeasureDoorLag(entries []Entry, reqs []Request) *DoorLag {
	if !ThroughDoor(reqs) {
		return nil
	}
	ws := Endpoints(entries).Withdrawals()
	if len(ws) == 0 {
		return nil
	}
	d := &DoorLag{Withdrawals: len(ws)}
	lags := make([]time.Duration, 0, len(ws))
	for _, w := range ws {
		var lag time.Duration
		late := 0
		for _, q := range reqs {
			if q.Upstream == "" || q.Pod != w.Pod || q.T < w.From.T || q.T >= w.Back {
				continue
			}
			late++
			lag = max(lag, q.T-w.From.T)
		}
		if late > 0 {
			d.Late++
			d.Requests += late
		}
		lags = append(lags, lag)
	}
	slices.Sort(lags)
	d.Median, d.Max = lags[len(lags)/2], lags[len(lags)-1]
	return d
}
