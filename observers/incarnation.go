package observers

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/probegate/probegate/internal/timeline"
)

// incarnations names each pod on the timeline by its UID: the first pod seen with a name keeps the
// name, a later pod with the same name and another UID (a StatefulSet's replacement) is
// timeline.Incarnation(name, 2), 3, and so on. Every observer asks the same registry, so a pod's
// endpoint, lifecycle and event entries agree whichever of them sees the new UID first.
type incarnations struct {
	mu    sync.Mutex
	byUID map[types.UID]string
	count map[string]int // name → incarnations seen
}

// key returns the timeline name of the pod name with uid. A reference without a UID (an old
// EndpointSlice, an event) names the latest incarnation seen.
func (in *incarnations) key(name string, uid types.UID) string {
	if name == "" {
		return ""
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.byUID == nil {
		in.byUID, in.count = map[types.UID]string{}, map[string]int{}
	}
	if uid == "" {
		return timeline.Incarnation(name, max(in.count[name], 1))
	}
	if k, ok := in.byUID[uid]; ok {
		return k
	}
	in.count[name]++
	k := timeline.Incarnation(name, in.count[name])
	in.byUID[uid] = k
	return k
}
