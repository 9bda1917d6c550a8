package loadgen

import (
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func TestPercentileIsExactNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if got := percentile(ds, 0.99); got != 99*time.Millisecond {
		t.Fatalf("p99 of 1..100ms = %v", got)
	}
	if got := percentile(ds, 0.50); got != 50*time.Millisecond {
		t.Fatalf("p50 of 1..100ms = %v", got)
	}
	if got := percentile([]time.Duration{7}, 0.99); got != 7 {
		t.Fatalf("p99 of one = %v", got)
	}
	if percentile(nil, 0.5) != 0 {
		t.Fatal("p50 of none should be 0")
	}
}

func TestWindowerGroupsBySecondAndClosesAfterLag(t *testing.T) {
	start := time.Now()
	tl := timeline.New(start)
	w := newWindower(tl, start, 2*time.Second)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	req := func(lat time.Duration, status int, class timeline.ErrorClass, pod string) timeline.Request {
		return timeline.Request{Latency: lat, Status: status, Error: class, Pod: pod}
	}
	for i := range 10 {
		w.add(req(time.Duration(i+1)*time.Millisecond, 200, "", "a"), at(time.Duration(i)*50*time.Millisecond))
	}
	w.add(req(time.Second, 0, timeline.ErrTimeout, ""), at(900*time.Millisecond))
	w.add(req(3*time.Millisecond, 503, timeline.ErrHTTP5xx, "b"), at(2500*time.Millisecond))

	w.closeUntil(at(2900 * time.Millisecond)) // window 0 ends at 1s, closes at 3s: not yet
	if n := len(tl.Filter(timeline.KindLoad)); n != 0 {
		t.Fatalf("%d windows written before the lag passed", n)
	}
	w.closeUntil(at(4100 * time.Millisecond)) // closes windows 0 and 1 (empty)
	wins := tl.Filter(timeline.KindLoad)
	if len(wins) != 2 {
		t.Fatalf("%d windows, want 2", len(wins))
	}
	w0 := wins[0].Load
	if w0.Second != 0 || w0.Sent != 11 || w0.OK != 10 || w0.Failed != 1 || w0.Rate != 11 {
		t.Fatalf("window 0 = %+v", *w0)
	}
	if w0.P50 != 6*time.Millisecond || w0.P99 != time.Second {
		t.Fatalf("window 0 p50 %v p99 %v", w0.P50, w0.P99)
	}
	if w0.ByPod["a"] != 10 || w0.Errors["timeout"] != 1 || w0.SuccessRatio != 10.0/11 {
		t.Fatalf("window 0 = %+v", *w0)
	}
	if wins[0].T != 0 || wins[1].T != time.Second {
		t.Fatalf("window offsets %v, %v", wins[0].T, wins[1].T)
	}
	if w1 := wins[1].Load; w1.Sent != 0 || w1.Rate != 0 || w1.SuccessRatio != 1 {
		t.Fatalf("empty window 1 = %+v", *w1)
	}

	w.add(req(time.Millisecond, 200, "", "a"), at(500*time.Millisecond)) // after window 0 was written
	if w.late != 1 {
		t.Fatalf("late = %d, want 1", w.late)
	}

	w.closeAll(at(2750 * time.Millisecond))
	wins = tl.Filter(timeline.KindLoad)
	if len(wins) != 3 {
		t.Fatalf("%d windows after closeAll, want 3", len(wins))
	}
	w2 := wins[2].Load
	if w2.Sent != 1 || w2.Errors["http-5xx"] != 1 || w2.ByPod["b"] != 1 {
		t.Fatalf("window 2 = %+v", *w2)
	}
	if w2.Rate < 1.33 || w2.Rate > 1.34 { // 1 request over the 0.75 s the window lasted
		t.Fatalf("partial window rate = %g, want 1/0.75", w2.Rate)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		code int
		err  string
		want timeline.ErrorClass
	}{
		{200, "", timeline.ErrNone},
		{302, "", timeline.ErrNone},
		{503, "503 Service Unavailable", timeline.ErrHTTP5xx},
		{429, "429 Too Many Requests", timeline.ErrHTTPOther},
		{0, `Get "http://127.0.0.1:1/": dial tcp 127.0.0.1:1: connect: connection refused`, timeline.ErrRefused},
		{0, `Get "http://127.0.0.1:1/": read tcp 127.0.0.1:5->127.0.0.1:1: read: connection reset by peer`, timeline.ErrReset},
		{0, `Get "http://127.0.0.1:1/": EOF`, timeline.ErrReset},
		{0, "unexpected EOF", timeline.ErrReset},
		{0, `Get "http://127.0.0.1:1/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, timeline.ErrTimeout},
		{0, "something odd", timeline.ErrOther},
		{0, "", timeline.ErrOther},
	} {
		if got := classify(tc.code, tc.err); got != tc.want {
			t.Errorf("classify(%d, %q) = %q, want %q", tc.code, tc.err, got, tc.want)
		}
	}
}
