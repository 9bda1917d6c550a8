package lint

import "sort"

// serviceIndex finds the Services that select a workload without scanning every Service: each
// Service with a selector is filed under the one label pair of its selector that the fewest
// Services share, so a workload looks up only the Services filed under one of its own pod labels
// and checks those in full. The Services a workload's lookup returns are kept for the other rules.
type serviceIndex struct {
	byLabel map[labelPair][]*Service
	// namespaces holds the namespaces of the Services in view; "" for one that names none.
	namespaces map[string]bool
	order      map[*Service]int // position in the inventory: lookups keep that order
	cache      map[*Workload][]*Service
}

type labelPair struct{ key, value string }

func newServiceIndex(services []*Service) *serviceIndex {
	count := map[labelPair]int{}
	for _, s := range services {
		for k, v := range s.Spec.Selector {
			count[labelPair{k, v}]++
		}
	}
	idx := &serviceIndex{byLabel: map[labelPair][]*Service{}, namespaces: map[string]bool{}, order: map[*Service]int{}, cache: map[*Workload][]*Service{}}
	for i, s := range services {
		idx.order[s] = i
		idx.namespaces[s.Namespace] = true
		var best labelPair
		found := false
		for k, v := range s.Spec.Selector {
			p := labelPair{k, v}
			if !found || count[p] < count[best] || count[p] == count[best] && (p.key < best.key || p.key == best.key && p.value < best.value) {
				best, found = p, true
			}
		}
		if found { // no selector: endpoints are managed by hand, it selects nothing
			idx.byLabel[best] = append(idx.byLabel[best], s)
		}
	}
	return idx
}

// selecting returns the Services whose selector matches w's pod labels, in inventory order.
func (idx *serviceIndex) selecting(w *Workload) []*Service {
	if out, ok := idx.cache[w]; ok {
		return out
	}
	var out []*Service
	for k, v := range w.PodLabels {
		for _, s := range idx.byLabel[labelPair{k, v}] {
			if selects(s, w) {
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return idx.order[out[i]] < idx.order[out[j]] })
	idx.cache[w] = out
	return out
}

// selects reports whether s routes to w's pods: the namespaces agree (an empty one matches any) and
// every pair of s's selector is among w's pod labels.
func selects(s *Service, w *Workload) bool {
	if s.Namespace != "" && w.Namespace != "" && s.Namespace != w.Namespace {
		return false
	}
	for k, v := range s.Spec.Selector {
		if got, ok := w.PodLabels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// inView reports whether lint can see the Services that might route to w: the inventory came from a
// live namespace (every Service of it was read), or it holds a Service in w's namespace (one that
// names no namespace, or a workload that names none, matches any). A manifest set with Services
// beside its workloads shows which of them serve; a workload read without any (its Services kept in
// other files, or CI linting the one file a change touched) shows nothing of the kind.
func (idx *serviceIndex) inView(inv *Inventory, w *Workload) bool {
	switch {
	case inv.AllServicesInView:
		return true
	case len(idx.namespaces) == 0:
		return false
	case w.Namespace == "" || idx.namespaces[""]:
		return true
	}
	return idx.namespaces[w.Namespace]
}
