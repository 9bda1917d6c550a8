package tune

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/reports"
)

const s = time.Second

var start = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// run is a hand-made scenario: a timeline and its requests.
type run struct {
	t        *testing.T
	tl       *timeline.Timeline
	requests []timeline.Request
}

func newRun(t *testing.T, spec corev1.PodSpec, ann map[string]string) *run {
	t.Helper()
	r := &run{t: t, tl: timeline.New(start)}
	r.add(0, timeline.Entry{Kind: timeline.KindMark, Mark: &timeline.Mark{Name: "start"}})
	r.add(time.Millisecond, workloadEntry(t, spec, ann))
	r.add(1*s, timeline.Entry{Kind: timeline.KindMark, Mark: &timeline.Mark{Name: "load-start"}})
	return r
}

func workloadEntry(t *testing.T, spec corev1.PodSpec, ann map[string]string) timeline.Entry {
	t.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return timeline.Entry{Kind: timeline.KindWorkload, Workload: &timeline.WorkloadSpec{
		Kind: "Deployment", Name: "web", Container: spec.Containers[0].Name, PodSpec: raw, Annotations: ann}}
}

func (r *run) add(t time.Duration, e timeline.Entry) {
	e.T, e.At = t, start.Add(t)
	r.tl.Append(e)
}

func (r *run) pod(t time.Duration, pod, field, from, to string) {
	r.add(t, timeline.Entry{Kind: timeline.KindPod, Pod: pod, PodChange: &timeline.PodTransition{Field: field, From: from, To: to}})
}

func (r *run) endpoint(t time.Duration, pod string, ready, terminating bool) {
	r.add(t, timeline.Entry{Kind: timeline.KindEndpoint, Pod: pod, Endpoint: &timeline.EndpointTransition{
		Change: timeline.EndpointChanged, Address: pod, To: &timeline.EndpointState{Ready: ready, Serving: ready, Terminating: terminating}}})
}

func (r *run) deleted(t time.Duration, pod string, grace int64) {
	r.add(t, timeline.Entry{Kind: timeline.KindPod, Pod: pod, PodChange: &timeline.PodTransition{Field: "deleting", To: "true", GracePeriodSeconds: &grace}})
}

// traffic sends one request every 100 ms from..to to pod (new connections).
func (r *run) traffic(pod string, from, to time.Duration) {
	for t := from; t < to; t += 100 * time.Millisecond {
		r.requests = append(r.requests, timeline.Request{Seq: uint64(len(r.requests) + 1), T: t, Latency: 20 * time.Millisecond, Status: 200, Pod: pod})
	}
}

func (r *run) report(name string) reports.ScenarioReport {
	r.add(120*s, timeline.Entry{Kind: timeline.KindMark, Mark: &timeline.Mark{Name: "load-end"}})
	return reports.ScenarioReport{Name: name, Variant: "good", Target: "fixture good", Timeline: r.tl, Requests: r.requests}
}

func recommend(t *testing.T, scs ...reports.ScenarioReport) Workload {
	t.Helper()
	res := Recommend([]Run{{Dir: "run1", Report: &reports.Report{Scenarios: scs}}}, Options{})
	if len(res.Workloads) != 1 {
		t.Fatalf("%d workloads, want 1 (skipped %v)", len(res.Workloads), res.Skipped)
	}
	return res.Workloads[0]
}

func field(t *testing.T, w Workload, name string) Recommendation {
	t.Helper()
	for _, r := range w.Recommendations {
		if r.Field == name {
			return r
		}
	}
	t.Fatalf("no recommendation for %s in %+v", name, w.Recommendations)
	return Recommendation{}
}

func httpProbe(path string, period, timeout, failure int32) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
		PeriodSeconds: period, TimeoutSeconds: timeout, FailureThreshold: failure}
}

// podSpec is a container "web" with readiness F2 P1 T1, liveness F3 P5 T1 and the given startup
// probe, preStop sleep and grace (0: unset).
func podSpec(startup *corev1.Probe, preStop, grace int64) corev1.PodSpec {
	c := corev1.Container{Name: "web", ReadinessProbe: httpProbe("/ready", 1, 1, 2), LivenessProbe: httpProbe("/live", 5, 1, 3), StartupProbe: startup}
	if preStop > 0 {
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: preStop}}}
	}
	spec := corev1.PodSpec{Containers: []corev1.Container{c}}
	if grace > 0 {
		spec.TerminationGracePeriodSeconds = &grace
	}
	return spec
}
