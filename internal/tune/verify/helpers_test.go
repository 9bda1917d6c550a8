package verify

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/tune"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

const s = time.Second

var start = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// recording is a hand-made scenario run of the fixture's Deployment "target", container "target".
type recording struct {
	tl       *timeline.Timeline
	requests []timeline.Request
}

func newRecording(t *testing.T, spec corev1.PodSpec, ann map[string]string) *recording {
	t.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	r := &recording{tl: timeline.New(start)}
	r.add(time.Millisecond, timeline.Entry{Kind: timeline.KindWorkload, Workload: &timeline.WorkloadSpec{
		Kind: "Deployment", Name: "target", Container: "target", PodSpec: raw, Annotations: ann}})
	r.add(1*s, timeline.Entry{Kind: timeline.KindMark, Mark: &timeline.Mark{Name: "load-start"}})
	return r
}

func (r *recording) add(t time.Duration, e timeline.Entry) {
	e.T, e.At = t, start.Add(t)
	r.tl.Append(e)
}

func (r *recording) pod(t time.Duration, pod, field, from, to string) {
	r.add(t, timeline.Entry{Kind: timeline.KindPod, Pod: pod, PodChange: &timeline.PodTransition{Field: field, From: from, To: to}})
}

func (r *recording) endpoint(t time.Duration, pod string, ready, terminating bool) {
	r.add(t, timeline.Entry{Kind: timeline.KindEndpoint, Pod: pod, Endpoint: &timeline.EndpointTransition{
		Change: timeline.EndpointChanged, Address: pod, To: &timeline.EndpointState{Ready: ready, Serving: ready, Terminating: terminating}}})
}

func (r *recording) traffic(pod string, from, to time.Duration) {
	for t := from; t < to; t += 100 * time.Millisecond {
		r.requests = append(r.requests, timeline.Request{Seq: uint64(len(r.requests) + 1), T: t, Latency: 20 * time.Millisecond, Status: 200, Pod: pod})
	}
}

// report ends the load at 60 s and names the run name/variant with its recorded verdicts.
func (r *recording) report(name, variant string, seed int64, verdicts ...verdict.Result) reports.ScenarioReport {
	r.add(60*s, timeline.Entry{Kind: timeline.KindMark, Mark: &timeline.Mark{Name: "load-end"}})
	return reports.ScenarioReport{Name: name, Variant: variant, Target: "fixture " + variant, Seed: seed,
		Timeline: r.tl, Requests: r.requests, Verdicts: verdicts}
}

func v(rule string, st verdict.Status) verdict.Result { return verdict.Result{Rule: rule, Status: st} }

func probe(path string, period, failure int32) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
		PeriodSeconds: period, TimeoutSeconds: 1, FailureThreshold: failure}
}

// spec is the fixture's container: readiness 1 s × 2, liveness 5 s × 3 (initial delay 10 s
// without a startup probe, as no-startup-probe), grace 25 s unless given.
func spec(startup bool, grace int64) corev1.PodSpec {
	c := corev1.Container{Name: "target", ReadinessProbe: probe("/health/ready", 1, 2), LivenessProbe: probe("/health/live", 5, 3)}
	if startup {
		c.StartupProbe = probe("/health/startup", 1, 60)
	} else {
		c.LivenessProbe.InitialDelaySeconds = 10
	}
	return corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{c}}
}

// appOwn is the fixture's annotation: the app delays its own exit for 5 s after SIGTERM.
var appOwn = map[string]string{"probegate.dev/withdrawal-seconds": "5", "probegate.dev/drain-seconds": "10"}

// noStartupProbe × cold-start: a 25 s bootstrap to ready, no startup probe, liveness allows 15 s.
func noStartupProbeColdStart(t *testing.T) reports.ScenarioReport {
	r := newRecording(t, spec(false, 25), appOwn)
	r.pod(9*s, "target-b", "container/target/state", "", "waiting:ContainerCreating")
	r.pod(10*s, "target-b", "container/target/state", "waiting:ContainerCreating", "running")
	r.pod(35*s, "target-b", "container/target/ready", "false", "true")
	return r.report("cold-start", "no-startup-probe", 105,
		v("startup-not-killed", verdict.Fail), v("min-ready-endpoints", verdict.Pass), v("recovery-within", verdict.Fail))
}

// noStartupProbeOverload is a run of the same variant that measured nothing tune changes.
func noStartupProbeOverload(t *testing.T) reports.ScenarioReport {
	r := newRecording(t, spec(false, 25), appOwn)
	return r.report("overload", "no-startup-probe", 110, v("min-ready-endpoints", verdict.Pass))
}

// shortGracePodDelete: grace 3 s; target-a, deleted in rotation at 10 s, still gets new
// connections until 15.5 s (past the app's own 5 s withdrawal delay) and is SIGKILLed at 13 s.
func shortGracePodDelete(t *testing.T) reports.ScenarioReport {
	r := newRecording(t, spec(true, 3), appOwn)
	r.endpoint(2*s, "target-a", true, false)
	r.endpoint(2*s, "target-b", true, false)
	r.traffic("target-a", 2*s, 15500*time.Millisecond)
	r.traffic("target-b", 2*s, 30*s)
	grace := int64(3)
	r.add(10*s, timeline.Entry{Kind: timeline.KindPod, Pod: "target-a", PodChange: &timeline.PodTransition{Field: "deleting", To: "true", GracePeriodSeconds: &grace}})
	r.endpoint(10200*time.Millisecond, "target-a", false, true)
	r.pod(13*s, "target-a", "container/target/state", "running", "terminated:Error:137")
	return r.report("pod-delete-under-load", "short-grace", 106,
		v("terminating-before-exit", verdict.Pass), v("no-traffic-after-withdrawal", verdict.Pass),
		v("failed-requests-budget", verdict.Fail), v("no-forced-kill", verdict.Fail), v("recovery-within", verdict.Pass))
}

// deepLivenessDBSlowness: readiness 5 s × 3 (so tune wants a longer liveness fuse) and a
// liveness restart while the database was slow.
func deepLivenessDBSlowness(t *testing.T) reports.ScenarioReport {
	sp := spec(true, 25)
	sp.Containers[0].ReadinessProbe = probe("/health/ready", 5, 3)
	r := newRecording(t, sp, appOwn)
	r.add(10*s, timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: "db-latency", Name: "f0", Action: timeline.FaultInject}})
	r.add(30*s, timeline.Entry{Kind: timeline.KindRestart, Pod: "target-a", Restart: &timeline.ContainerRestart{Container: "target", RestartCount: 1, Cause: timeline.CauseLiveness}})
	r.add(35*s, timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: "db-latency", Name: "f0", Action: timeline.FaultRevert}})
	return r.report("db-slowness", "deep-liveness", 101, v("no-liveness-restarts", verdict.Fail), v("no-unexpected-restarts", verdict.Fail))
}

// catalogue is a Catalogue of short scenarios named as the bundled ones.
type catalogue map[string]*scenario.Scenario

func (c catalogue) Get(name string) (*scenario.Scenario, bool) {
	sc, ok := c[name]
	return sc, ok
}

func testCatalogue(rules map[string][]string) catalogue {
	c := catalogue{}
	for n, rs := range rules {
		sc := &scenario.Scenario{Name: n, Seed: 1, Parallel: true, Settle: 10 * time.Millisecond,
			Target: scenario.Target{Variant: "good", Replicas: 3},
			Load:   scenario.Load{Rate: 10, Duration: 50 * time.Millisecond, Path: "/work"}}
		for _, r := range rs {
			sc.Expect = append(sc.Expect, scenario.Expectation{Rule: r})
		}
		c[n] = sc
	}
	return c
}

var (
	coldStartRules = []string{"startup-not-killed", "min-ready-endpoints", "recovery-within"}
	podDeleteRules = []string{"terminating-before-exit", "no-traffic-after-withdrawal", "failed-requests-budget", "no-forced-kill", "recovery-within"}
	bundled        = testCatalogue(map[string][]string{"cold-start": coldStartRules, "overload": {"min-ready-endpoints"},
		"pod-delete-under-load": podDeleteRules, "db-slowness": {"no-liveness-restarts", "no-unexpected-restarts"}})
)

// plan tunes one report directory "before" holding scenario runs and plans their verification.
func plan(t *testing.T, scs ...reports.ScenarioReport) *Plan {
	t.Helper()
	runs := []tune.Run{{Dir: "before", Report: &reports.Report{Scenarios: scs}}}
	p, err := NewPlan(tune.Recommend(runs, tune.Options{}), runs, bundled, false)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func workload(t *testing.T, p *Plan, variant string) *Workload {
	t.Helper()
	for _, w := range p.Workloads {
		if w.Target == "fixture "+variant {
			return w
		}
	}
	t.Fatalf("no workload of %s", variant)
	return nil
}

func change(t *testing.T, w *Workload, field string) *Change {
	t.Helper()
	for _, c := range w.Changes {
		if c.Rec.Field == field {
			return c
		}
	}
	t.Fatalf("no change for %s", field)
	return nil
}
