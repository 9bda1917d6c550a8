package timeline

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// incarnationSep separates a pod's name from its incarnation number. It cannot occur in a
// Kubernetes name, so a key never collides with a real pod's name.
const incarnationSep = "#"

// Incarnation is the timeline's name for the n-th pod (by UID) the run saw with name: the name
// itself for the first, "name#n" for later ones. A StatefulSet's pods come back with the same
// name; every per-pod reading keys on this, so a replacement is never mistaken for the pod it
// replaced.
func Incarnation(name string, n int) string {
	if n <= 1 {
		return name
	}
	return name + incarnationSep + strconv.Itoa(n)
}

// PodName is the Kubernetes name of a timeline pod key (the key without its incarnation).
func PodName(key string) string {
	name, _, _ := strings.Cut(key, incarnationSep)
	return name
}

// Incarnations maps a Kubernetes pod name to the timeline key of the pod that had it at a moment,
// from the pods' "created" entries: for reports that name pods only by name, such as a response
// header naming the serving pod.
type Incarnations map[string][]addressHolder

// IncarnationsOf reads when each incarnation of each pod name was created. Pods present when the
// run started count from their first entry.
func IncarnationsOf(entries []Entry) Incarnations {
	out := Incarnations{}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Pod == "" || seen[e.Pod] || (e.Kind != KindPod && e.Kind != KindEndpoint) {
			continue
		}
		seen[e.Pod] = true
		name := PodName(e.Pod)
		out[name] = append(out[name], addressHolder{T: e.T, Pod: e.Pod})
	}
	for _, ps := range out {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].T < ps[j].T })
	}
	return out
}

// KeyAt is the key of the pod that had name at t: the last incarnation first seen by t + WatchLag,
// or the first when none was yet; name itself when the timeline never saw it.
func (in Incarnations) KeyAt(name string, t time.Duration) string {
	ps := in[name]
	if len(ps) == 0 {
		return name
	}
	key := ps[0].Pod
	for _, p := range ps[1:] {
		if p.T > t+WatchLag {
			break
		}
		key = p.Pod
	}
	return key
}

// Renamed reports whether any pod name had more than one incarnation.
func (in Incarnations) Renamed() bool {
	for _, ps := range in {
		if len(ps) > 1 {
			return true
		}
	}
	return false
}

// KeyHeaderPods renames the pods a response header named (by their Kubernetes name) to the
// incarnation that had the name when the request started. Requests are changed in place.
func KeyHeaderPods(reqs []Request, entries []Entry) []Request {
	in := IncarnationsOf(entries)
	if !in.Renamed() {
		return reqs
	}
	for i := range reqs {
		if reqs[i].PodFrom == PodFromHeader && reqs[i].Pod != "" {
			reqs[i].Pod = in.KeyAt(reqs[i].Pod, reqs[i].T)
		}
	}
	return reqs
}
