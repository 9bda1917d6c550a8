package observers

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/probegate/probegate/internal/timeline"
)

const ns = "demo"

// rig is an Observer on a fake clientset whose watches the test can break.
type rig struct {
	t      testing.TB
	client *fake.Clientset
	tl     *timeline.Timeline
	obs    *Observer

	mu      sync.Mutex
	watches map[string][]*breakableWatch // resource → watches opened
}

func newRig(t testing.TB, opts Options, objs ...runtime.Object) *rig {
	t.Helper()
	// The simple tracker (no server-side-apply field management): an order of magnitude cheaper per
	// update, which the memory benchmark needs; the observer does not care.
	client := fake.NewSimpleClientset(objs...) //nolint:staticcheck // see above
	r := &rig{t: t, client: client, tl: timeline.New(time.Now()), watches: map[string][]*breakableWatch{}}
	r.client.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		var lo metav1.ListOptions
		if wa, ok := a.(k8stesting.WatchActionImpl); ok {
			lo = wa.ListOptions
		}
		inner, err := r.client.Tracker().Watch(a.GetResource(), a.GetNamespace(), lo)
		if err != nil {
			return true, nil, err
		}
		w := newBreakableWatch(inner)
		r.mu.Lock()
		r.watches[a.GetResource().Resource] = append(r.watches[a.GetResource().Resource], w)
		r.mu.Unlock()
		return true, w, nil
	})
	if opts.Namespace == "" {
		opts.Namespace = ns
	}
	if opts.MoveWindow == 0 {
		opts.MoveWindow = 100 * time.Millisecond
	}
	obs, err := New(r.client, r.tl, opts)
	if err != nil {
		t.Fatal(err)
	}
	r.obs = obs
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	obs.Start(context.Background())
	t.Cleanup(obs.Stop)
	if err := obs.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	return r
}

// breakWatch cuts every open watch of a resource, as a dropped connection would.
func (r *rig) breakWatch(resource string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.watches[resource] {
		w.cut()
	}
}

// watchCount is how many watches of a resource were opened.
func (r *rig) watchCount(resource string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.watches[resource])
}

// waitFor polls the timeline until cond holds.
func (r *rig) waitFor(what string, cond func([]timeline.Entry) bool) []timeline.Entry {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		es := r.tl.Entries()
		if cond(es) {
			return es
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s; timeline:\n%s", what, dump(es))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func dump(es []timeline.Entry) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "  %s\n", describe(e))
	}
	return b.String()
}

// describe renders an entry in one short line for assertions.
func describe(e timeline.Entry) string {
	rec := ""
	if e.Recovered {
		rec = " (recovered)"
	}
	switch e.Kind {
	case timeline.KindEndpoint:
		x := e.Endpoint
		return fmt.Sprintf("endpoint %s %s %s %s->%s%s", x.Change, e.Pod, x.Address, st(x.From), st(x.To), rec)
	case timeline.KindPod:
		x := e.PodChange
		return fmt.Sprintf("pod %s %s %s->%s%s", e.Pod, x.Field, x.From, x.To, rec)
	case timeline.KindRestart:
		x := e.Restart
		return fmt.Sprintf("restart %s %s #%d %s%s", e.Pod, x.Container, x.RestartCount, x.Cause, rec)
	case timeline.KindProbe:
		return fmt.Sprintf("probe %s %s %s x%d%s", e.Pod, e.Probe.Probe, e.Probe.Container, e.Probe.Count, rec)
	case timeline.KindEvent:
		return fmt.Sprintf("event %s %s x%d%s", e.Event.Reason, e.Event.Object, e.Event.Count, rec)
	case timeline.KindRollout:
		x := e.Rollout
		return fmt.Sprintf("rollout %s replicas=%d updated=%d ready=%d available=%d%s", x.Deployment, x.Replicas, x.Updated, x.Ready, x.Available, rec)
	case timeline.KindMark:
		return fmt.Sprintf("mark %s %s", e.Mark.Name, e.Mark.Detail)
	}
	return string(e.Kind)
}

func st(s *timeline.EndpointState) string {
	if s == nil {
		return "none"
	}
	var parts []string
	for _, p := range []struct {
		on   bool
		name string
	}{{s.Ready, "R"}, {s.Serving, "S"}, {s.Terminating, "T"}} {
		if p.on {
			parts = append(parts, p.name)
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "")
}

// kinds keeps the described entries of the given kinds, dropping marks unless asked for.
func kinds(es []timeline.Entry, ks ...timeline.Kind) []string {
	var out []string
	for _, e := range es {
		for _, k := range ks {
			if e.Kind == k {
				out = append(out, describe(e))
			}
		}
	}
	return out
}

func hasLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

func equalLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("entries:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// breakableWatch forwards a tracker watch until cut.
type breakableWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

func newBreakableWatch(inner watch.Interface) *breakableWatch {
	w := &breakableWatch{inner: inner, out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(w.out)
		defer inner.Stop()
		for {
			select {
			case <-w.stop:
				return
			case ev, ok := <-inner.ResultChan():
				if !ok {
					return
				}
				select {
				case w.out <- ev:
				case <-w.stop:
					return
				}
			}
		}
	}()
	return w
}

func (w *breakableWatch) cut()                           { w.once.Do(func() { close(w.stop) }) }
func (w *breakableWatch) Stop()                          { w.cut() }
func (w *breakableWatch) ResultChan() <-chan watch.Event { return w.out }

// Object builders.

func ptr[T any](v T) *T { return &v }

func slice(name string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
	}
}

func ep(pod, addr string, ready, serving, terminating *bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{
		Addresses:  []string{addr},
		Conditions: discoveryv1.EndpointConditions{Ready: ready, Serving: serving, Terminating: terminating},
		NodeName:   ptr("node"),
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod},
	}
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, Started: ptr(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			}},
		},
	}
}
