package timeline

import (
	"net/netip"
	"sort"
	"time"
)

// AddressBook says which pod had an endpoint address when, from the EndpointSlice entries: a pod
// IP reused after a restart or a replacement names the right pod. Observers that see the data
// plane (conntrack flows, kube-proxy's rules) know addresses only; this is where they get pods.
type AddressBook map[netip.Addr][]addressHolder

// addressHolder is a pod that had an address from T on.
type addressHolder struct {
	T   time.Duration
	Pod string
}

// Addresses reads when each pod first had each endpoint address.
func Addresses(entries []Entry) AddressBook {
	out := AddressBook{}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Kind != KindEndpoint || e.Endpoint == nil || e.Pod == "" {
			continue
		}
		a, err := netip.ParseAddr(e.Endpoint.Address)
		if err != nil {
			continue
		}
		key := a.String() + "/" + e.Pod
		if seen[key] {
			continue
		}
		seen[key] = true
		out[a] = append(out[a], addressHolder{T: e.T, Pod: e.Pod})
	}
	for _, ps := range out {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].T < ps[j].T })
	}
	return out
}

// WatchLag is how long before the harness's EndpointSlice watch reports a change the data plane
// (kube-proxy's rules, conntrack's flows) may already act on it.
const WatchLag = time.Second

// PodAt is the pod that had addr at t: the last to take it by t + WatchLag; when none had yet, the
// first one; "" for an address no endpoint ever had.
func (b AddressBook) PodAt(addr netip.Addr, t time.Duration) string {
	ps := b[addr]
	if len(ps) == 0 {
		return ""
	}
	pod := ps[0].Pod
	for _, p := range ps[1:] {
		if p.T > t+WatchLag {
			break
		}
		pod = p.Pod
	}
	return pod
}
