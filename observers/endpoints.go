package observers

import (
	"cmp"
	"slices"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/probegate/probegate/internal/timeline"
)

// endpointKey identifies one endpoint across the Service's slices: its first address and pod.
type endpointKey struct {
	address string
	pod     string
}

// endpointInfo is what the timeline last said about an endpoint.
type endpointInfo struct {
	slice string
	node  string
	zone  string
	state timeline.EndpointState
}

// endpointObserver turns EndpointSlice updates into per-endpoint transitions. It tracks each
// endpoint across all slices of the Service: an endpoint that leaves one slice and shows up in
// another is a move (reported as "changed" only if its conditions differ), never removed + added.
// When it leaves before it shows up elsewhere, the removal is held back for MoveWindow.
type endpointObserver struct {
	o *Observer

	mu      sync.Mutex
	slices  map[string]map[endpointKey]endpointInfo // slice name → its endpoints
	current map[endpointKey]endpointInfo            // what the timeline last said
	pending map[endpointKey]*pendingRemoval
}

// pendingRemoval is an endpoint that left its slice and is not (yet) in any other.
type pendingRemoval struct {
	s     stamp
	api   *time.Time
	timer *time.Timer
}

func newEndpointObserver(o *Observer) *endpointObserver {
	return &endpointObserver{o: o,
		slices:  map[string]map[endpointKey]endpointInfo{},
		current: map[endpointKey]endpointInfo{},
		pending: map[endpointKey]*pendingRemoval{},
	}
}

func (x *endpointObserver) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, _ bool) {
			if sl, ok := obj.(*discoveryv1.EndpointSlice); ok {
				x.sliceChanged(x.o.stampOf(obj), sl.Name, sl)
			}
		},
		UpdateFunc: func(_, obj any) {
			if sl, ok := obj.(*discoveryv1.EndpointSlice); ok {
				x.sliceChanged(x.o.stampOf(obj), sl.Name, sl)
			}
		},
		DeleteFunc: func(obj any) {
			s := x.o.stampOf(obj)
			inner, _ := unwrap(obj)
			if sl, ok := inner.(*discoveryv1.EndpointSlice); ok {
				x.sliceChanged(s, sl.Name, nil)
			} else if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				_, name, _ := cache.SplitMetaNamespaceKey(d.Key)
				x.sliceChanged(s, name, nil)
			}
		},
	}
}

// endpointsOf returns a slice's endpoints with nil conditions defaulted per the API, each pod named
// by ids (nil: by its name).
func endpointsOf(sl *discoveryv1.EndpointSlice, ids *incarnations) map[endpointKey]endpointInfo {
	out := map[endpointKey]endpointInfo{}
	for _, ep := range sl.Endpoints {
		if len(ep.Addresses) == 0 {
			continue
		}
		k := endpointKey{address: ep.Addresses[0]}
		if ep.TargetRef != nil && (ep.TargetRef.Kind == "" || ep.TargetRef.Kind == "Pod") {
			k.pod = ep.TargetRef.Name
			if ids != nil {
				k.pod = ids.key(ep.TargetRef.Name, ep.TargetRef.UID)
			}
		}
		info := endpointInfo{slice: sl.Name, state: timeline.EndpointState{
			Ready:       ep.Conditions.Ready == nil || *ep.Conditions.Ready,
			Serving:     ep.Conditions.Serving == nil || *ep.Conditions.Serving,
			Terminating: ep.Conditions.Terminating != nil && *ep.Conditions.Terminating,
		}}
		if ep.NodeName != nil {
			info.node = *ep.NodeName
		}
		if ep.Zone != nil {
			info.zone = *ep.Zone
		}
		out[k] = info
	}
	return out
}

// sliceChanged applies a slice's new content (nil: the slice is gone).
func (x *endpointObserver) sliceChanged(s stamp, name string, sl *discoveryv1.EndpointSlice) {
	if sl != nil && x.o.opts.Service != "" && sl.Labels[serviceNameLabel] != x.o.opts.Service {
		return
	}
	var api *time.Time
	var now map[endpointKey]endpointInfo
	if sl != nil {
		now = endpointsOf(sl, &x.o.ids)
		if v, ok := sl.Annotations["endpoints.kubernetes.io/last-change-trigger-time"]; ok {
			if t, err := time.Parse(time.RFC3339, v); err == nil {
				api = &t
			}
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	before := x.slices[name]
	if sl == nil {
		delete(x.slices, name)
	} else {
		x.slices[name] = now
	}
	for _, k := range sortedKeys(now) {
		info := now[k]
		if p, ok := x.pending[k]; ok {
			p.timer.Stop()
			delete(x.pending, k)
		}
		prev, known := x.current[k]
		x.current[k] = info
		switch {
		case !known:
			x.emit(s, api, k, info, timeline.EndpointAdded, nil, &info.state)
		case prev.state != info.state:
			x.emit(s, api, k, info, timeline.EndpointChanged, &prev.state, &info.state)
		}
	}
	for _, k := range sortedKeys(before) {
		if _, still := now[k]; still {
			continue
		}
		cur, ok := x.current[k]
		if !ok || cur.slice != name {
			continue // already owned by another slice
		}
		if other, ok := x.elsewhere(k); ok {
			x.current[k] = other
			if other.state != cur.state {
				x.emit(s, api, k, other, timeline.EndpointChanged, &cur.state, &other.state)
			}
			continue
		}
		x.holdRemoval(s, api, k)
	}
}

// sortedKeys orders a slice's endpoints by address, then pod: one slice's changes reach the
// timeline in the same order on every run.
func sortedKeys(m map[endpointKey]endpointInfo) []endpointKey {
	keys := make([]endpointKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b endpointKey) int {
		return cmp.Or(cmp.Compare(a.address, b.address), cmp.Compare(a.pod, b.pod))
	})
	return keys
}

// elsewhere finds the endpoint in any slice still holding it.
func (x *endpointObserver) elsewhere(k endpointKey) (endpointInfo, bool) {
	for _, eps := range x.slices {
		if info, ok := eps[k]; ok {
			return info, true
		}
	}
	return endpointInfo{}, false
}

// holdRemoval reports the endpoint removed after MoveWindow unless it reappears first. The entry
// keeps the time the removal was received.
func (x *endpointObserver) holdRemoval(s stamp, api *time.Time, k endpointKey) {
	if x.o.opts.MoveWindow < 0 {
		x.remove(s, api, k)
		return
	}
	p := &pendingRemoval{s: s, api: api}
	p.timer = time.AfterFunc(x.o.opts.MoveWindow, func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		if x.pending[k] == p {
			delete(x.pending, k)
			x.remove(p.s, p.api, k)
		}
	})
	x.pending[k] = p
}

// remove writes the removal of k; x.mu is held.
func (x *endpointObserver) remove(s stamp, api *time.Time, k endpointKey) {
	cur, ok := x.current[k]
	if !ok {
		return
	}
	delete(x.current, k)
	x.emit(s, api, k, cur, timeline.EndpointRemoved, &cur.state, nil)
}

// flush writes every held-back removal now.
func (x *endpointObserver) flush() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for k, p := range x.pending {
		p.timer.Stop()
		delete(x.pending, k)
		x.remove(p.s, p.api, k)
	}
}

// emit appends one endpoint transition; x.mu is held (appends are ordered per endpoint).
func (x *endpointObserver) emit(s stamp, api *time.Time, k endpointKey, info endpointInfo, change string, from, to *timeline.EndpointState) {
	x.o.append(s, timeline.Entry{Kind: timeline.KindEndpoint, Pod: k.pod, APITime: api, Endpoint: &timeline.EndpointTransition{
		Change: change, Slice: info.slice, Address: k.address, Node: info.node, Zone: info.zone, From: from, To: to}})
}
