package tune

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// boot records pod's container going running at from and started/ready at to.
func (r *run) boot(pod string, from, to time.Duration, endField string) {
	r.pod(from-time.Second, pod, "container/web/state", "", "waiting:ContainerCreating")
	r.pod(from, pod, "container/web/state", "waiting:ContainerCreating", "running")
	r.pod(to, pod, "container/web/"+endField, "false", "true")
}

func TestStartupBudgetFollowsP99Bootstrap(t *testing.T) {
	// Startup probe F=5 × P=1 s = 5 s; bootstraps of 4 s and 10 s → 10 s × 1.5 = 15 s → F = 15.
	r := newRun(t, podSpec(httpProbe("/startup", 1, 1, 5), 0, 30), nil)
	r.boot("web-a", 10*s, 14*s, "started")
	r.boot("web-b", 20*s, 30*s, "started")
	r.pod(31*s, "web-c", "container/web/state", "", "running") // already running when seen: not a sample
	r.pod(31*s, "web-c", "container/web/started", "", "true")
	rec := field(t, recommend(t, r.report("cold-start")), "startupProbe.failureThreshold")
	if rec.Status != Change || rec.Recommended != "15" {
		t.Fatalf("got %s → %q, want change → 15\n%+v", rec.Status, rec.Recommended, rec)
	}
	if len(rec.Evidence) != 2 || rec.Evidence[0].Value != 10*s || rec.Evidence[0].Pod != "web-b" {
		t.Errorf("evidence %+v, want the 10 s bootstrap of web-b first, 2 in all", rec.Evidence)
	}
	if rec.patch == nil || rec.patch.value != int32(15) {
		t.Errorf("patch %+v", rec.patch)
	}

	// The same bootstraps inside a 60 s budget: keep.
	r = newRun(t, podSpec(httpProbe("/startup", 1, 1, 60), 0, 30), nil)
	r.boot("web-b", 20*s, 30*s, "started")
	if rec := field(t, recommend(t, r.report("cold-start")), "startupProbe.failureThreshold"); rec.Status != Keep {
		t.Errorf("60 s budget: %s, want keep", rec.Status)
	}

	// No completed start: left alone, naming the scenario that would measure it.
	r = newRun(t, podSpec(httpProbe("/startup", 1, 1, 5), 0, 30), nil)
	rec = field(t, recommend(t, r.report("db-slowness")), "startupProbe.failureThreshold")
	if rec.Status != LeftAlone || !strings.Contains(rec.Supply, "cold-start") || rec.Recommended != "" {
		t.Errorf("no evidence: %+v", rec)
	}
}

func TestSlowBootstrapWithoutStartupProbeGetsOne(t *testing.T) {
	// Liveness F=3 × P=5 s = 15 s; a 20 s bootstrap (to ready, no startup probe) × 1.5 = 30 s → a
	// startup probe with P=5, F=6 on the liveness handler.
	spec := podSpec(nil, 0, 30)
	spec.Containers[0].LivenessProbe.InitialDelaySeconds = 10
	r := newRun(t, spec, nil)
	r.boot("web-a", 10*s, 30*s, "ready")
	w := recommend(t, r.report("cold-start"))
	rec := field(t, w, "startupProbe")
	if rec.Status != Add || !strings.Contains(rec.Recommended, "periodSeconds 5, failureThreshold 6") {
		t.Fatalf("%s → %q", rec.Status, rec.Recommended)
	}
	if d := field(t, w, "livenessProbe.initialDelaySeconds"); d.Status != Change || d.Recommended != "0" {
		t.Errorf("initial delay: %+v", d)
	}
	var out bytes.Buffer
	if err := WritePatch(&out, Result{Workloads: []Workload{w}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: Deployment", "name: web", "startupProbe:", "failureThreshold: 6", "path: /live", "initialDelaySeconds: 0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("patch lacks %q:\n%s", want, out.String())
		}
	}
}

func TestWithdrawalDelayCoversLastRequest(t *testing.T) {
	// web-a is deleted in rotation at 10 s (preStop sleep 1 s), goes terminating at 10.2 s, and new
	// connections still reach it until 12.5 s while web-b serves: 2.5 s (more than the 2 s
	// propagation allowance) + 1 s margin → 4 s.
	r := newRun(t, podSpec(nil, 1, 30), nil)
	r.endpoint(2*s, "web-a", true, false)
	r.endpoint(2*s, "web-b", true, false)
	r.traffic("web-a", 2*s, 12600*time.Millisecond)
	r.traffic("web-b", 2*s, 30*s)
	r.deleted(10*s, "web-a", 30)
	r.endpoint(10200*time.Millisecond, "web-a", false, true)
	rec := field(t, recommend(t, r.report("pod-delete-under-load")), "lifecycle.preStop (withdrawal delay)")
	if rec.Status != Change || rec.Recommended != "4 s" {
		t.Fatalf("%s → %q, want change → 4 s\n%+v", rec.Status, rec.Recommended, rec)
	}
	if ev := rec.Evidence[0]; ev.From != 10*s || ev.To != 12500*time.Millisecond || ev.RequestSeq == 0 {
		t.Errorf("evidence %+v, want deletion 10 s → request at 12.5 s", ev)
	}
	if rec.patch == nil || rec.patch.path[1] != "preStop" {
		t.Errorf("patch %+v", rec.patch)
	}

	// Requests that reach a withdrawn pod while no other endpoint is ready (a shared outage) are
	// not routing lag: with web-b withdrawn too, the same traffic gives a 0 s lag. A run without a
	// late request does not show kube-proxy never lags: the delay is still at least the 2 s
	// propagation allowance + 1 s margin, so a 3 s delay is kept and a 1 s one raised to 3 s.
	for _, tc := range []struct {
		preStop int64
		status  Status
	}{{3, Keep}, {1, Change}} {
		r = newRun(t, podSpec(nil, tc.preStop, 30), nil)
		r.endpoint(2*s, "web-a", true, false)
		r.endpoint(2*s, "web-b", true, false)
		r.traffic("web-a", 2*s, 20*s)
		r.endpoint(10*s, "web-b", false, false)
		r.endpoint(10*s+time.Millisecond, "web-a", false, false)
		rec = field(t, recommend(t, r.report("db-slowness")), "lifecycle.preStop (withdrawal delay)")
		if rec.Status != tc.status || rec.Evidence[0].Value != 0 || !strings.Contains(rec.Formula, "propagation allowance 2.00 s") {
			t.Errorf("shared outage, preStop %d s: %s %q, evidence %+v\n%s", tc.preStop, rec.Status, rec.Recommended, rec.Evidence, rec.Formula)
		}
		if tc.status == Change && rec.Recommended != "3 s" {
			t.Errorf("shared outage, preStop 1 s: recommended %q, want 3 s (the propagation floor)", rec.Recommended)
		}
	}

	// No withdrawal under load: left alone.
	r = newRun(t, podSpec(nil, 1, 30), nil)
	if rec := field(t, recommend(t, r.report("overload")), "lifecycle.preStop (withdrawal delay)"); rec.Status != LeftAlone || !strings.Contains(rec.Supply, "pod-delete-under-load") {
		t.Errorf("no withdrawal: %+v", rec)
	}
}

func TestGraceCoversWithdrawalDrainAndCleanup(t *testing.T) {
	// preStop 3 s; deleted at 10 s, exited cleanly at 22 s: drain + cleanup 9 s. Grace ≥ 3 + 9 + 2 = 14 s
	// > 12 s → 14 s.
	r := newRun(t, podSpec(nil, 3, 12), nil)
	r.deleted(10*s, "web-a", 12)
	r.pod(22*s, "web-a", "container/web/state", "running", "terminated:Completed:0")
	rec := field(t, recommend(t, r.report("pod-delete-under-load")), "terminationGracePeriodSeconds")
	if rec.Status != Change || rec.Recommended != "14 s" {
		t.Fatalf("%s → %q, want change → 14 s\n%+v", rec.Status, rec.Recommended, rec)
	}
	if rec.Evidence[0].Value != 9*s {
		t.Errorf("drain evidence %+v, want 9 s", rec.Evidence[0])
	}

	// A forced kill at a grace the scenario cut (5 s < the spec's 12 s) says nothing: left alone.
	r = newRun(t, podSpec(nil, 3, 12), nil)
	r.deleted(10*s, "web-a", 5)
	r.pod(15500*time.Millisecond, "web-a", "container/web/state", "running", "terminated:Error:137")
	if rec := field(t, recommend(t, r.report("drain-exceeds-grace")), "terminationGracePeriodSeconds"); rec.Status != LeftAlone {
		t.Errorf("scenario-cut grace: %+v", rec)
	}

	// A forced kill at the spec's own grace: the longest successful request (20 s) stands in for
	// the drain: 3 + 20 + 2 = 25 s.
	r = newRun(t, podSpec(nil, 3, 12), nil)
	r.requests = append(r.requests, timeline.Request{Seq: 7, T: 2 * s, Latency: 20 * s, Status: 200, Pod: "web-b"})
	r.deleted(30*s, "web-a", 12)
	r.pod(42500*time.Millisecond, "web-a", "container/web/state", "running", "terminated:Error:137")
	rec = field(t, recommend(t, r.report("long-request-drain")), "terminationGracePeriodSeconds")
	if rec.Status != Change || rec.Recommended != "25 s" || rec.Evidence[0].RequestSeq != 7 {
		t.Errorf("forced at spec grace: %s → %q, evidence %+v", rec.Status, rec.Recommended, rec.Evidence)
	}
}

func TestLivenessNeverShorterFusedThanReadiness(t *testing.T) {
	// Readiness F=3 × P=5 s + 1 s; liveness F=3 × P=5 s: (3−1)·5 = 10 s < 16 s + 2 s oracle
	// propagation = 18 s → F_l = 5 ((5−1)·5 = 20 s).
	spec := podSpec(nil, 0, 30)
	spec.Containers[0].ReadinessProbe = httpProbe("/ready", 5, 1, 3)
	r := newRun(t, spec, nil)
	rec := field(t, recommend(t, r.report("event-loop-stall")), "livenessProbe.failureThreshold")
	if rec.Status != Change || rec.Recommended != "5" || !strings.Contains(rec.Formula, "oracle's allowance") {
		t.Fatalf("%s → %q (%s)", rec.Status, rec.Recommended, rec.Formula)
	}
	// A measured propagation of 0.5 s replaces the allowance: 16.5 s → still F_l = 5, now cited.
	r = newRun(t, spec, nil)
	r.endpoint(2*s, "web-a", true, false)
	r.pod(10*s, "web-a", "container/web/ready", "true", "false")
	r.endpoint(10500*time.Millisecond, "web-a", false, false)
	rec = field(t, recommend(t, r.report("db-slowness")), "livenessProbe.failureThreshold")
	if rec.Status != Change || len(rec.Evidence) != 1 || rec.Evidence[0].Value != 500*time.Millisecond {
		t.Errorf("measured propagation: %+v", rec)
	}
	// The default podSpec (readiness 2 × 1 s + 1 s + 2 s = 5 s ≤ 10 s): keep.
	r = newRun(t, podSpec(nil, 0, 30), nil)
	if rec := field(t, recommend(t, r.report("db-slowness")), "livenessProbe.failureThreshold"); rec.Status != Keep {
		t.Errorf("default spec: %+v", rec)
	}
}

func TestLivenessRestartDuringDependencyFaultCannotBeTuned(t *testing.T) {
	r := newRun(t, podSpec(nil, 0, 30), nil)
	r.add(10*s, timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: "db-latency", Name: "f0", Action: timeline.FaultInject}})
	r.add(30*s, timeline.Entry{Kind: timeline.KindRestart, Pod: "web-a", Restart: &timeline.ContainerRestart{Container: "web", RestartCount: 1, Cause: timeline.CauseLiveness}})
	r.add(35*s, timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{Type: "db-latency", Name: "f0", Action: timeline.FaultRevert}})
	rec := field(t, recommend(t, r.report("db-slowness")), "livenessProbe (handler)")
	if rec.Status != CannotTune || len(rec.Evidence) != 1 || rec.Evidence[0].To != 30*s {
		t.Errorf("%+v", rec)
	}
	var out bytes.Buffer
	if err := WritePatch(&out, Result{Workloads: []Workload{recommend(t, r.report("db-slowness"))}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "no change to patch") {
		t.Errorf("a handler problem produced a patch:\n%s", out.String())
	}
}

func TestReadinessTimeoutIsNeverGuessed(t *testing.T) {
	r := newRun(t, podSpec(nil, 0, 30), nil)
	r.add(12*s, timeline.Entry{Kind: timeline.KindProbe, Pod: "web-a", Probe: &timeline.ProbeFailure{Probe: "readiness", Container: "web",
		Message: `Readiness probe failed: Get "http://10.0.0.1:8080/ready": context deadline exceeded`, Count: 1}})
	rec := field(t, recommend(t, r.report("overload")), "readinessProbe.timeoutSeconds")
	if rec.Status != LeftAlone || rec.Recommended != "" || len(rec.Evidence) != 1 || !strings.Contains(rec.Why, "no run recorded") {
		t.Errorf("%+v", rec)
	}
}

// TestKilledStartsSetAFloor: no-startup-probe under cold-start. Liveness (10 s initial delay,
// F=3 × P=5 s) kills the 25 s bootstrap after 20.5 s, twice; after the fault a 5 s bootstrap
// completes. The completed one alone would keep liveness (7.5 s ≤ 15 s), but the killed ones
// show a bootstrap longer than 20.5 s: 20.5 × 1.5 = 30.75 s → a startup probe P=5, F=7.
func TestKilledStartsSetAFloor(t *testing.T) {
	spec := podSpec(nil, 0, 30)
	spec.Containers[0].LivenessProbe.InitialDelaySeconds = 10
	r := newRun(t, spec, nil)
	restart := func(at time.Duration, n int32) {
		r.add(at, timeline.Entry{Kind: timeline.KindRestart, Pod: "web-a", Restart: &timeline.ContainerRestart{Container: "web", RestartCount: n, Cause: timeline.CauseLiveness}})
	}
	r.pod(9*s, "web-a", "container/web/state", "", "waiting:ContainerCreating")
	r.pod(10*s, "web-a", "container/web/state", "waiting:ContainerCreating", "running")
	restart(30500*time.Millisecond, 1)
	r.pod(31*s, "web-a", "container/web/state", "running", "terminated:Error:137")
	r.pod(32*s, "web-a", "container/web/state", "terminated:Error:137", "running")
	restart(50*s, 2)
	r.boot("web-b", 80*s, 85*s, "ready")
	w := recommend(t, r.report("cold-start"))
	rec := field(t, w, "startupProbe")
	if rec.Status != Add || !strings.Contains(rec.Recommended, "periodSeconds 5, failureThreshold 7") {
		t.Fatalf("%s → %q\n%s", rec.Status, rec.Recommended, rec.Formula)
	}
	if rec.Evidence[0].Value != 20500*time.Millisecond || !strings.Contains(rec.Formula, "a floor: 2 starts were killed") {
		t.Errorf("evidence %+v\nformula %s: want the 20.5 s killed start first, cited as a floor", rec.Evidence[0], rec.Formula)
	}
	if !rec.Patched() || len(rec.Motivated) != 1 {
		t.Errorf("patched %v, motivated %v", rec.Patched(), rec.Motivated)
	}

	// The completed start alone: liveness allows it.
	r = newRun(t, spec, nil)
	r.boot("web-b", 80*s, 85*s, "ready")
	if rec := field(t, recommend(t, r.report("cold-start")), "startupProbe"); rec.Status != Keep {
		t.Errorf("completed start only: %s", rec.Status)
	}
}

// readinessHistogram adds kubelet's readiness-probe histogram of one pod: n probes, of which the
// given numbers stayed within each bound.
func readinessHistogram(r *run, pod string, within map[string]int64, n int64) {
	var b []timeline.LatencyBucket
	for _, le := range []string{"0.005", "0.25", "0.5", "1", "2.5", "5"} {
		if c, ok := within[le]; ok {
			b = append(b, timeline.LatencyBucket{Le: le, Count: c})
		}
	}
	b = append(b, timeline.LatencyBucket{Le: "+Inf", Count: n})
	r.add(40*s, timeline.Entry{Kind: timeline.KindProbeLatency, Pod: pod, Latency: &timeline.ProbeLatency{Probe: "readiness", Container: "web", Buckets: b}})
}

func TestReadinessTimeoutFollowsKubeletsHistogram(t *testing.T) {
	// 200 probes over two pods, 99 % within 0.25 s: 0.25 × 1.5 → 1 s, the current timeout is kept.
	r := newRun(t, podSpec(nil, 0, 30), nil)
	readinessHistogram(r, "web-a", map[string]int64{"0.005": 50, "0.25": 99, "0.5": 100, "1": 100}, 100)
	readinessHistogram(r, "web-b", map[string]int64{"0.005": 50, "0.25": 100, "0.5": 100, "1": 100}, 100)
	rec := field(t, recommend(t, r.report("overload")), "readinessProbe.timeoutSeconds")
	if rec.Status != Keep || !strings.Contains(rec.Formula, "200 readiness probes ≤ 0.25 s") || len(rec.Evidence) != 1 {
		t.Errorf("fast handler: %s %q\n%s\n%+v", rec.Status, rec.Recommended, rec.Formula, rec.Evidence)
	}

	// 3 of 100 took up to the 1 s timeout (where kubelet cuts them off): the latency is hidden, so
	// at least twice the timeout.
	r = newRun(t, podSpec(nil, 0, 30), nil)
	readinessHistogram(r, "web-a", map[string]int64{"0.005": 50, "0.25": 90, "0.5": 97, "1": 100}, 100)
	rec = field(t, recommend(t, r.report("overload")), "readinessProbe.timeoutSeconds")
	if rec.Status != Change || rec.Recommended != "2" || !strings.Contains(rec.Formula, "hidden") || rec.patch == nil {
		t.Errorf("censored: %s %q\n%s", rec.Status, rec.Recommended, rec.Formula)
	}
}

func TestReadinessTimeoutAboveTheP99WithMargin(t *testing.T) {
	// timeout 3 s; p99 within 2.5 s (not cut off): 2.5 × 1.5 = 3.75 → 4 s.
	spec := podSpec(nil, 0, 30)
	spec.Containers[0].ReadinessProbe.TimeoutSeconds = 3
	r := newRun(t, spec, nil)
	readinessHistogram(r, "web-a", map[string]int64{"0.5": 90, "1": 95, "2.5": 100, "5": 100}, 100)
	rec := field(t, recommend(t, r.report("db-slowness")), "readinessProbe.timeoutSeconds")
	if rec.Status != Change || rec.Recommended != "4" || strings.Contains(rec.Formula, "hidden") {
		t.Errorf("%s %q\n%s", rec.Status, rec.Recommended, rec.Formula)
	}
}
