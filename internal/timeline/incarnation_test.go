package timeline

import (
	"testing"
	"time"
)

func TestIncarnationNames(t *testing.T) {
	if got := Incarnation("web-1", 1); got != "web-1" {
		t.Errorf("first incarnation = %q, want the name itself", got)
	}
	k := Incarnation("web-1", 2)
	if k == "web-1" || PodName(k) != "web-1" {
		t.Errorf("second incarnation %q: PodName gives %q", k, PodName(k))
	}
}

func TestKeyHeaderPods(t *testing.T) {
	second := Incarnation("web-1", 2)
	entries := []Entry{
		{T: 0, Kind: KindPod, Pod: "web-1"},
		{T: 1 * time.Second, Kind: KindPod, Pod: "web-0"},
		{T: 20 * time.Second, Kind: KindPod, Pod: second},
	}
	reqs := []Request{
		{T: 5 * time.Second, Pod: "web-1", PodFrom: PodFromHeader},
		{T: 25 * time.Second, Pod: "web-1", PodFrom: PodFromHeader},
		{T: 25 * time.Second, Pod: "web-0", PodFrom: PodFromHeader},
		{T: 25 * time.Second, Pod: "web-1", PodFrom: PodFromConntrack},
	}
	got := KeyHeaderPods(reqs, entries)
	want := []string{"web-1", second, "web-0", "web-1"}
	for i, r := range got {
		if r.Pod != want[i] {
			t.Errorf("request %d (t=%s, %s): pod %q, want %q", i, r.T, r.PodFrom, r.Pod, want[i])
		}
	}
}

func TestRunPodsNamesKeysAndNames(t *testing.T) {
	second := Incarnation("web-1", 2)
	pods := RunPods([]Entry{
		{Kind: KindPod, Pod: "web-0"},
		{Kind: KindEndpoint, Pod: second},
		{Kind: KindFault, Pod: "chaos"}, // a fault's pod is not evidence the pod ran
	})
	for name, want := range map[string]bool{"web-0": true, second: true, "web-1": true, "chaos": false, "target": false, "": false} {
		if got := pods.Names(name); got != want {
			t.Errorf("Names(%q) = %v, want %v", name, got, want)
		}
	}
}
