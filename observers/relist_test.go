package observers

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate/internal/timeline"
)

// TestWatchBreakRelistRecoversGapChanges cuts the pod and EndpointSlice watches, changes things
// while they are down, and checks that the relist puts every change on the timeline marked
// Recovered, that changes before and after the gap are not marked, and that a mark records the gap.
func TestWatchBreakRelistRecoversGapChanges(t *testing.T) {
	r := newRig(t, Options{Service: "web", MoveWindow: -1},
		pod("p1"), pod("p2"),
		slice("web-a", ep("p1", "10.0.0.1", nil, nil, nil), ep("p2", "10.0.0.2", nil, nil, nil)))
	entriesWhen(r, "initial", func(l []string) bool { return len(l) >= 14 }, timeline.KindPod, timeline.KindEndpoint)

	// Before the gap: a live change.
	p1 := pod("p1")
	p1.Status.ContainerStatuses[0].Ready = false
	updatePod(t, r, p1)
	entriesWhen(r, "live change", func(l []string) bool { return hasLine(l, "pod p1 container/app/ready true->false") }, timeline.KindPod)

	podWatches, sliceWatches := r.watchCount("pods"), r.watchCount("endpointslices")
	r.breakWatch("pods")
	r.breakWatch("endpointslices")
	// While the watches are down (the reflector backs off before it relists): p1 restarts and
	// turns ready again, p2 is deleted, its endpoint goes away, a pod p3 appears.
	p1 = pod("p1")
	p1.Status.ContainerStatuses[0].RestartCount = 1
	p1.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, FinishedAt: metav1.Now()}}
	updatePod(t, r, p1)
	if err := r.client.CoreV1().Pods(ns).Delete(context.Background(), "p2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.client.CoreV1().Pods(ns).Create(context.Background(), pod("p3"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	updateSlice(t, r, slice("web-a", ep("p1", "10.0.0.1", nil, nil, nil)))

	want := []string{
		"pod p1 container/app/ready false->true (recovered)",
		"restart p1 app #1 app-exit (recovered)",
		"pod p2 deleted Running-> (recovered)",
		"restart p2 app #0 deletion (recovered)",
		"pod p3 created ->Running (recovered)",
		"endpoint removed p2 10.0.0.2 RS->none (recovered)",
	}
	got := entriesWhen(r, "recovered entries", func(l []string) bool {
		for _, w := range want {
			if !hasLine(l, w) {
				return false
			}
		}
		return true
	}, timeline.KindPod, timeline.KindEndpoint, timeline.KindRestart)

	// Nothing recovered twice, nothing invented: every recovered entry is one of the gap's changes.
	for _, l := range got {
		if strings.HasSuffix(l, "(recovered)") && !strings.HasPrefix(l, "pod p3 ") && !hasLine(want, l) {
			t.Errorf("unexpected recovered entry %q", l)
		}
	}
	for _, e := range r.tl.Entries() {
		if e.Kind == timeline.KindPod && e.Pod == "p1" && e.PodChange.Field == "container/app/ready" && e.PodChange.To == "false" && e.Recovered {
			t.Errorf("the change before the gap is marked recovered")
		}
	}
	marks := kinds(r.tl.Entries(), timeline.KindMark)
	if !hasLine(marks, "mark watch-gap pods watch ended; relisting") || !hasLine(marks, "mark watch-gap endpointslices watch ended; relisting") {
		t.Fatalf("gap marks missing: %v", marks)
	}
	if rl := r.obs.Relists(); rl["pods"] != 1 || rl["endpointslices"] != 1 || rl["events"] != 0 {
		t.Fatalf("relists = %v", rl)
	}
	// The new watch starts after the relist, asynchronously: wait for it (a busy machine delays it).
	for deadline := time.Now().Add(5 * time.Second); r.watchCount("pods") <= podWatches || r.watchCount("endpointslices") <= sliceWatches; {
		if time.Now().After(deadline) {
			t.Fatalf("no new watch within 5s after the relist")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// After the relist the watch is live again: changes are not recovered.
	p3 := pod("p3")
	p3.Status.ContainerStatuses[0].Ready = false
	updatePod(t, r, p3)
	entriesWhen(r, "live after gap", func(l []string) bool { return hasLine(l, "pod p3 container/app/ready true->false") }, timeline.KindPod)
}

// TestRelistWithoutChangesWritesNothing checks that a gap in which nothing changed adds only the
// gap mark.
func TestRelistWithoutChangesWritesNothing(t *testing.T) {
	r := newRig(t, Options{Service: "web", MoveWindow: -1}, pod("p1"), slice("web-a", ep("p1", "10.0.0.1", nil, nil, nil)))
	before := len(r.tl.Entries())
	r.breakWatch("pods")
	deadline := time.Now().Add(10 * time.Second)
	for r.obs.Relists()["pods"] == 0 || r.watchCount("pods") < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no relist after the watch broke")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	es := r.tl.Entries()
	if len(es) != before+1 || es[len(es)-1].Kind != timeline.KindMark {
		t.Fatalf("relist without changes added entries:\n%s", dump(es[before:]))
	}
}
