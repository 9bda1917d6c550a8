package reports_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/reports/reportstest"
)

const s = time.Second

func TestSummariseCountsRequestsByClassAndPod(t *testing.T) {
	b := reportstest.New()
	b.Ready(0, "a")
	b.Ready(0, "b")
	reqs := []timeline.Request{
		{Seq: 1, T: 1 * s, Latency: 10 * time.Millisecond, Status: 200, Pod: "a"},
		{Seq: 2, T: 2 * s, Latency: 20 * time.Millisecond, Status: 200, Pod: "a"},
		{Seq: 3, T: 3 * s, Latency: 30 * time.Millisecond, Status: 200, Pod: "b"},
		{Seq: 4, T: 4 * s, Latency: 40 * time.Millisecond, Status: 503, Pod: "b"},
		{Seq: 5, T: 5 * s, Latency: time.Millisecond, Error: timeline.ErrRefused},
		{Seq: 6, T: 6 * s, Latency: 2 * s, Error: timeline.ErrTimeout, Pod: "a"},
		{Seq: 7, T: 7 * s, Latency: 50 * time.Millisecond, Status: 404, Pod: "a"},
		{Seq: 8, T: 8 * s, Latency: 60 * time.Millisecond, Status: 204, Pod: "b"},
	}
	// The load generator attempted 9: one request was never recorded.
	b.TL.Append(timeline.Entry{Kind: timeline.KindLoad, T: 1 * s, At: reportstest.Start.Add(1 * s),
		Load: &timeline.LoadWindow{Second: 0, Sent: 9}})

	sum := reports.Summarise(b.TL.Entries(), reqs)
	q := sum.Requests
	if q.Sent != 9 || q.Recorded != 8 || q.OK != 4 || q.Failed != 4 {
		t.Fatalf("sent/recorded/ok/failed = %d/%d/%d/%d, want 9/8/4/4", q.Sent, q.Recorded, q.OK, q.Failed)
	}
	wantClass := map[string]int{"http-5xx": 1, "refused": 1, "timeout": 1, "http-other": 1}
	if !reflect.DeepEqual(q.FailedByClass, wantClass) {
		t.Errorf("failed by class = %v, want %v", q.FailedByClass, wantClass)
	}
	if q.SuccessRatio != 0.5 {
		t.Errorf("success ratio = %v, want 0.5", q.SuccessRatio)
	}
	// Sorted latencies: 1ms 10 20 30 40 50 60 2000ms; nearest-rank p50 = 4th = 30 ms.
	if q.P50 != 30*time.Millisecond || q.P99 != 2*s || q.Max != 2*s {
		t.Errorf("p50/p99/max = %v/%v/%v, want 30ms/2s/2s", q.P50, q.P99, q.Max)
	}
	// 7 requests name a pod: a has 4, b has 3.
	if len(sum.Pods) != 2 || sum.Pods[0].Pod != "a" || sum.Pods[0].Requests != 4 || sum.Pods[1].Requests != 3 {
		t.Fatalf("pods = %+v", sum.Pods)
	}
	if got := sum.Pods[0].Share; got < 0.5714 || got > 0.5715 {
		t.Errorf("share of a = %v, want 4/7", got)
	}
	if sum.Span != 8*s+60*time.Millisecond {
		t.Errorf("span = %v, want 8.06s (the last request's end)", sum.Span)
	}
}

func TestSummariseTimesEndpointStatesPerPod(t *testing.T) {
	b := reportstest.New()
	b.NotReady(1*s, "a")
	b.Ready(3*s, "a")     // not ready 1→3 s
	b.NotReady(10*s, "a") // ready 3→10 s
	b.Ready(12*s, "a")    // not ready 10→12 s
	b.Draining(20*s, "a") // ready 12→20 s
	b.Terminating(25*s, "a")
	b.Removed(27*s, "a") // terminating 20→27 s
	b.Ready(2*s, "b")
	b.Restart(11*s, "a", 1, timeline.CauseLiveness)
	b.Restart(15*s, "b", 1, timeline.CauseOOM)
	b.Restart(16*s, "b", 2, timeline.CauseLiveness)
	b.Mark(30*s, "end") // b stays ready 2→30 s

	sum := reports.Summarise(b.TL.Entries(), nil)
	want := []reports.PodFigures{
		{Pod: "a", Restarts: 1, Ready: 15 * s, NotReady: 4 * s, Terminating: 7 * s},
		{Pod: "b", Restarts: 2, Ready: 28 * s},
	}
	if !reflect.DeepEqual(sum.Pods, want) {
		t.Errorf("pods\n got %+v\nwant %+v", sum.Pods, want)
	}
	if !reflect.DeepEqual(sum.Restarts, map[string]int{"liveness": 2, "oom": 1}) {
		t.Errorf("restarts by cause = %v", sum.Restarts)
	}
}

func TestSummariseFallsBackToLoadWindows(t *testing.T) {
	b := reportstest.New()
	for i, w := range []timeline.LoadWindow{
		{Second: 0, Sent: 10, OK: 10, ByPod: map[string]int{"a": 5, "b": 5}},
		{Second: 1, Sent: 10, OK: 7, Failed: 3, Errors: map[string]int{"refused": 3}, ByPod: map[string]int{"a": 7}},
	} {
		w := w
		b.TL.Append(timeline.Entry{Kind: timeline.KindLoad, T: time.Duration(i+1) * s, At: reportstest.Start.Add(time.Duration(i+1) * s), Load: &w})
	}
	sum := reports.Summarise(b.TL.Entries(), nil)
	q := sum.Requests
	if q.Sent != 20 || q.Recorded != 0 || q.OK != 17 || q.Failed != 3 || q.FailedByClass["refused"] != 3 {
		t.Errorf("requests = %+v", q)
	}
	if len(sum.Pods) != 2 || sum.Pods[0].Requests != 12 || sum.Pods[1].Requests != 5 {
		t.Errorf("pods = %+v", sum.Pods)
	}
}

func TestFaultIntervalsPairInjectWithRevert(t *testing.T) {
	b := reportstest.New()
	b.Fault(10*s, "db-latency", "x", timeline.FaultInject, "toxiproxy")
	b.Fault(12*s, "stall", "y", timeline.FaultInject, "pod-a")
	b.Fault(15*s, "db-latency", "x", timeline.FaultObserve, "toxiproxy")
	b.Fault(20*s, "db-latency", "x", timeline.FaultRevert, "toxiproxy")
	b.Fault(25*s, "db-latency", "x", timeline.FaultInject, "toxiproxy")
	got := reports.FaultIntervals(b.TL.Entries(), 40*s)
	unproven := func(what string) string { return what + " was injected but no proof of its effect was recorded" }
	want := []reports.FaultInterval{
		{Type: "db-latency", Name: "x", Target: "toxiproxy", From: 10 * s, To: 20 * s, Reverted: true, Note: unproven("db-latency (x)")},
		{Type: "stall", Name: "y", Target: "pod-a", From: 12 * s, To: 40 * s, Note: unproven("stall (y)")},
		{Type: "db-latency", Name: "x", Target: "toxiproxy", From: 25 * s, To: 40 * s, Note: unproven("db-latency (x)")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("intervals\n got %+v\nwant %+v", got, want)
	}
}

// Problem 6 of issue 11: the report paired faults by exact type/name/target and ignored skips,
// the verdicts by name with fallbacks, so the two could disagree about when a fault was. Both now
// read timeline.FaultWindows: a revert that names its target differently still closes the window,
// and a skip is shown.
func TestReportAndVerdictsAgreeOnFaults(t *testing.T) {
	b := reportstest.New()
	b.Fault(10*s, "freeze", "faults[0]", timeline.FaultInject, "pod/a")
	b.Fault(18*s, "freeze", "faults[0]", timeline.FaultRevert, "a")
	b.Fault(20*s, "db-latency", "faults[1]", timeline.FaultSkip, "")
	entries := b.TL.Entries()
	got := reports.FaultIntervals(entries, 40*s)
	windows := timeline.FaultWindows(entries)
	if len(got) != 2 || len(windows) != 2 {
		t.Fatalf("report shows %d faults, verdicts see %d; want 2 and 2: %+v", len(got), len(windows), got)
	}
	for i, w := range windows {
		if got[i].From != w.Start || got[i].To != w.End || got[i].Skipped != w.Skipped {
			t.Errorf("fault %d: report %s–%s skipped=%v, verdicts %s–%s skipped=%v", i, got[i].From, got[i].To, got[i].Skipped, w.Start, w.End, w.Skipped)
		}
	}
	if got[0].To != 18*s || !got[0].Reverted {
		t.Errorf("freeze: report %+v, want reverted at 18s", got[0])
	}
	if !got[1].Skipped || got[1].Note == "" {
		t.Errorf("skipped db-latency: report %+v", got[1])
	}
}

func TestEndpointBandsCloseAtEnd(t *testing.T) {
	b := reportstest.New()
	b.Ready(2*s, "a")
	b.NotReady(5*s, "a")
	bands := timeline.Endpoints(b.TL.Entries()).Bands(9 * s)
	if len(bands) != 2 {
		t.Fatalf("bands = %+v", bands)
	}
	if bands[0].From != 2*s || bands[0].To != 5*s || !bands[0].State.Ready {
		t.Errorf("first band = %+v", bands[0])
	}
	if bands[1].From != 5*s || bands[1].To != 9*s || bands[1].State.Ready {
		t.Errorf("second band = %+v", bands[1])
	}
}

func TestSummariseIsDeterministic(t *testing.T) {
	sc := reportstest.DBSlowLiveness(20)
	a := reports.Summarise(sc.Timeline.Entries(), sc.Requests)
	b := reports.Summarise(sc.Timeline.Entries(), sc.Requests)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two summaries of the same input differ")
	}
	if a.Restarts["liveness"] != 6 || len(a.Pods) != 3 || a.Requests.FailedByClass["refused"] == 0 {
		t.Errorf("sample summary = %+v", a)
	}
}

func TestSummariseWithoutLoadWindowsCountsRecordedAsSent(t *testing.T) {
	reqs := []timeline.Request{{Seq: 1, Status: 200}, {Seq: 2, Status: 500}, {Seq: 3, Status: 200}}
	q := reports.Summarise(nil, reqs).Requests
	if q.Sent != 3 || q.Recorded != 3 || q.OK != 2 || q.FailedByClass["http-5xx"] != 1 {
		t.Errorf("requests = %+v", q)
	}
}
