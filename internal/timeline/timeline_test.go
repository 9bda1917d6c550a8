package timeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAppendKeepsEntriesSortedByTAndSeqInAppendOrder(t *testing.T) {
	start := time.Now()
	tl := New(start)
	// Offsets deliberately out of order: 3s, 1s, 2s, 1s again.
	for _, s := range []int{3, 1, 2, 1} {
		tl.Append(Entry{Kind: KindMark, At: start.Add(time.Duration(s) * time.Second), Mark: &Mark{Name: fmt.Sprint(s)}})
	}
	got := tl.Entries()
	var names []string
	var seqs []int64
	for _, e := range got {
		names = append(names, e.Mark.Name)
		seqs = append(seqs, e.Seq)
	}
	if strings.Join(names, ",") != "1,1,2,3" {
		t.Fatalf("order by T = %v, want 1,1,2,3", names)
	}
	// Equal offsets keep append order: the first "1" was appended second (seq 2), the other fourth.
	if fmt.Sprint(seqs) != "[2 4 3 1]" {
		t.Fatalf("seqs = %v, want [2 4 3 1]", seqs)
	}
	if got[0].T != time.Second || got[3].T != 3*time.Second {
		t.Fatalf("T not derived from At: %v .. %v", got[0].T, got[3].T)
	}
}

func TestAppendStampsNowWhenAtIsZero(t *testing.T) {
	tl := New(time.Now())
	before := time.Now()
	e := tl.Append(Entry{Kind: KindMark, Mark: &Mark{Name: "x"}})
	after := time.Now()
	if e.At.Before(before) || e.At.After(after) {
		t.Fatalf("At %v not within [%v, %v]", e.At, before, after)
	}
	if e.T <= 0 || e.T > tl.Since(after) {
		t.Fatalf("T = %v, want in (0, %v]", e.T, tl.Since(after))
	}
	if e.Seq != 1 {
		t.Fatalf("Seq = %d, want 1", e.Seq)
	}
}

func TestAppendKeepsExplicitT(t *testing.T) {
	start := time.Now()
	tl := New(start)
	e := tl.Append(Entry{Kind: KindMark, At: start.Add(time.Hour), T: 5 * time.Millisecond, Mark: &Mark{Name: "x"}})
	if e.T != 5*time.Millisecond {
		t.Fatalf("explicit T overwritten: %v", e.T)
	}
}

func TestConcurrentAppendsLoseNothingAndStaySorted(t *testing.T) {
	start := time.Now()
	tl := New(start)
	var streamed bytes.Buffer
	tl.StreamTo(&streamed)
	const writers, each = 8, 500
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				// Interleave stamped-now entries with back-dated ones to exercise insertion.
				e := Entry{Kind: KindMark, Mark: &Mark{Name: fmt.Sprintf("%d/%d", w, i)}}
				if i%3 == 0 {
					e.At = start.Add(time.Duration(i) * time.Microsecond)
				}
				tl.Append(e)
			}
		}(w)
	}
	wg.Wait()
	if err := tl.Err(); err != nil {
		t.Fatal(err)
	}
	got := tl.Entries()
	if len(got) != writers*each {
		t.Fatalf("len = %d, want %d", len(got), writers*each)
	}
	seen := map[int64]bool{}
	names := map[string]bool{}
	for i, e := range got {
		if i > 0 && got[i-1].T > e.T {
			t.Fatalf("entry %d out of order: %v after %v", i, e.T, got[i-1].T)
		}
		if seen[e.Seq] {
			t.Fatalf("duplicate seq %d", e.Seq)
		}
		seen[e.Seq] = true
		names[e.Mark.Name] = true
	}
	for s := int64(1); s <= writers*each; s++ {
		if !seen[s] {
			t.Fatalf("seq %d missing", s)
		}
	}
	if len(names) != writers*each {
		t.Fatalf("distinct entries = %d, want %d", len(names), writers*each)
	}
	if n := strings.Count(streamed.String(), "\n"); n != writers*each {
		t.Fatalf("streamed %d lines, want %d", n, writers*each)
	}
	loaded, err := Load(&streamed)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Len() != writers*each {
		t.Fatalf("loaded %d entries from the stream, want %d", loaded.Len(), writers*each)
	}
}

func TestFilter(t *testing.T) {
	tl := New(time.Now())
	tl.Append(Entry{Kind: KindMark, Mark: &Mark{Name: "a"}})
	tl.Append(Entry{Kind: KindEvent, Event: &Event{Reason: "Killing"}})
	tl.Append(Entry{Kind: KindMark, Mark: &Mark{Name: "b"}})
	marks := tl.Filter(KindMark)
	if len(marks) != 2 || marks[0].Mark.Name != "a" || marks[1].Mark.Name != "b" {
		t.Fatalf("Filter(mark) = %+v", marks)
	}
	if n := len(tl.Filter(KindRestart)); n != 0 {
		t.Fatalf("Filter(restart) = %d entries, want 0", n)
	}
}

// sample returns one entry of every kind with every detail field populated.
func sample(start time.Time) []Entry {
	api := start.Add(2 * time.Second).Truncate(time.Second).UTC()
	fin := api.Add(-time.Second)
	grace := int64(30)
	return []Entry{
		{Kind: KindMark, Mark: &Mark{Name: "start", Detail: "scenario x"}},
		{Kind: KindEndpoint, Pod: "p1", APITime: &api, Endpoint: &EndpointTransition{Change: EndpointChanged, Slice: "s-1", Address: "10.244.0.5", Node: "n",
			From: &EndpointState{Ready: true, Serving: true}, To: &EndpointState{Serving: true, Terminating: true}}},
		{Kind: KindEndpoint, Pod: "p1", Endpoint: &EndpointTransition{Change: EndpointAdded, Slice: "s-1", Address: "10.244.0.6", To: &EndpointState{Ready: true, Serving: true}}},
		{Kind: KindPod, Pod: "p1", PodChange: &PodTransition{Field: "deleting", From: "", To: "true", GracePeriodSeconds: &grace}},
		{Kind: KindRestart, Pod: "p1", Recovered: true, Restart: &ContainerRestart{Container: "app", RestartCount: 2, Reason: "Error", ExitCode: 137, FinishedAt: &fin, Cause: CauseLiveness, Evidence: "Killing event"}},
		{Kind: KindProbe, Pod: "p1", Probe: &ProbeFailure{Probe: ProbeLiveness, Container: "app", Message: "Liveness probe failed: timeout", Count: 3}},
		{Kind: KindEvent, Pod: "p1", Event: &Event{Reason: "Killing", Type: "Normal", Object: "Pod/p1", Message: "Stopping container app", Count: 1}},
		{Kind: KindRollout, Rollout: &RolloutProgress{Deployment: "target", Generation: 2, Replicas: 3, Updated: 1, Ready: 2, Available: 2, Unavailable: 1}},
		{Kind: KindFault, Fault: &FaultAction{Type: "db-latency", Action: FaultInject, Target: "postgres", Params: map[string]string{"latency": "2s"}}},
		{Kind: KindLoad, Load: &LoadWindow{Second: 4, Sent: 100, OK: 99, Failed: 1, Rate: 100, SuccessRatio: 0.99, P50: 3 * time.Millisecond, P99: 40 * time.Millisecond,
			ByPod: map[string]int{"p1": 50, "p2": 49}, Errors: map[string]int{"reset": 1}}},
	}
}

func TestJSONLRoundTrip(t *testing.T) {
	start := time.Now()
	tl := New(start)
	for i, e := range sample(start) {
		e.At = start.Add(time.Duration(i+1)*time.Second + 1234*time.Nanosecond)
		tl.Append(e)
	}
	var buf bytes.Buffer
	if err := tl.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	want, got := tl.Entries(), loaded.Entries()
	if len(got) != len(want) {
		t.Fatalf("loaded %d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].At.Equal(want[i].At) {
			t.Errorf("entry %d At %v, want %v", i, got[i].At, want[i].At)
		}
		// Compare everything else through a canonical JSON form (time zones and monotonic
		// readings do not survive JSON and are not part of the data).
		w, g := want[i], got[i]
		w.At, g.At = time.Time{}, time.Time{}
		wj, _ := json.Marshal(w)
		gj, _ := json.Marshal(g)
		if !bytes.Equal(wj, gj) {
			t.Errorf("entry %d changed in round trip:\n got  %s\n want %s", i, gj, wj)
		}
	}
	if !loaded.Start().Equal(start) {
		t.Fatalf("recovered start %v, want %v", loaded.Start(), start)
	}
	// A loaded timeline keeps numbering after the highest Seq.
	next := loaded.Append(Entry{Kind: KindMark, Mark: &Mark{Name: "after"}})
	if next.Seq != int64(len(want))+1 {
		t.Fatalf("Seq after load = %d, want %d", next.Seq, len(want)+1)
	}
	if elapsed := time.Since(start); next.T <= 0 || next.T > elapsed+time.Millisecond {
		t.Fatalf("T after load = %v, want in (0, %v]: not measured from the recovered start", next.T, elapsed)
	}
}

func TestLoadSortsStreamedEntriesByT(t *testing.T) {
	in := `{"seq":1,"t":3000,"at":"2026-01-01T00:00:00.000003Z","kind":"mark","mark":{"name":"c"}}
{"seq":2,"t":1000,"at":"2026-01-01T00:00:00.000001Z","kind":"mark","mark":{"name":"a"}}

{"seq":3,"t":2000,"at":"2026-01-01T00:00:00.000002Z","kind":"mark","mark":{"name":"b"}}
`
	tl, err := Load(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range tl.Entries() {
		names = append(names, e.Mark.Name)
	}
	if strings.Join(names, "") != "abc" {
		t.Fatalf("order = %v, want a b c", names)
	}
	if want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); !tl.Start().Equal(want) {
		t.Fatalf("start = %v, want %v", tl.Start(), want)
	}
}

func TestLoadRejectsBadLines(t *testing.T) {
	for name, in := range map[string]string{
		"not json": "{\"seq\":1,\"kind\":\"mark\"}\nnope\n",
		"no kind":  "{\"seq\":1,\"t\":0}\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(strings.NewReader(in))
			if err == nil {
				t.Fatal("Load accepted bad input")
			}
			if !strings.Contains(err.Error(), "line") {
				t.Fatalf("error %q does not name the line", err)
			}
		})
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	if w.n > 1 {
		return 0, fmt.Errorf("disk full")
	}
	return len(p), nil
}

func TestStreamErrorIsKeptAndAppendsContinue(t *testing.T) {
	tl := New(time.Now())
	tl.StreamTo(&failingWriter{})
	for i := 0; i < 3; i++ {
		tl.Append(Entry{Kind: KindMark, Mark: &Mark{Name: "x"}})
	}
	if tl.Len() != 3 {
		t.Fatalf("Len = %d, want 3", tl.Len())
	}
	if err := tl.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Err = %v, want the write error", err)
	}
}

func TestRequestsRoundTrip(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reqs := []Request{
		{Seq: 1, T: time.Millisecond, Start: start.Add(time.Millisecond), Latency: 2 * time.Millisecond, Status: 200, Pod: "p1", Bytes: 10, Reused: true},
		{Seq: 2, T: 2 * time.Millisecond, Start: start.Add(2 * time.Millisecond), Latency: time.Second, Error: ErrTimeout, Detail: "deadline"},
	}
	var buf bytes.Buffer
	if err := WriteRequests(&buf, reqs); err != nil {
		t.Fatal(err)
	}
	got, err := LoadRequests(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != reqs[0] || got[1].Error != ErrTimeout || !got[1].Start.Equal(reqs[1].Start) {
		t.Fatalf("round trip = %+v", got)
	}
	if !got[0].OK() || got[1].OK() {
		t.Fatalf("OK() wrong: %v %v", got[0].OK(), got[1].OK())
	}
	if got[0].End() != 3*time.Millisecond {
		t.Fatalf("End = %v", got[0].End())
	}
}
