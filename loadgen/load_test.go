package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// podServer answers 200 and names one of pods (round robin) in the pod header; it counts the TCP
// connections it accepted.
type podServer struct {
	*httptest.Server
	conns atomic.Int64
	hits  atomic.Int64
}

func newPodServer(t *testing.T, pods ...string) *podServer {
	t.Helper()
	s := &podServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.hits.Add(1)
		w.Header().Set(DefaultPodHeader, pods[int(n)%len(pods)])
		fmt.Fprintln(w, "ok")
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func run(t *testing.T, cfg Config) (Report, []timeline.Request, *timeline.Timeline, error) {
	t.Helper()
	if cfg.Timeline == nil {
		cfg.Timeline = timeline.New(time.Now())
	}
	var buf bytes.Buffer
	cfg.Requests = &buf
	rep, err := Run(context.Background(), cfg)
	reqs, lerr := timeline.LoadRequests(&buf)
	if lerr != nil {
		t.Fatalf("read back requests: %v", lerr)
	}
	return rep, reqs, cfg.Timeline, err
}

func TestRecordsEveryRequestWithPodAndReuse(t *testing.T) {
	srv := newPodServer(t, "pod-a", "pod-b")
	rep, reqs, tl, err := run(t, Config{URL: srv.URL + "/", Rate: 200, Duration: time.Second})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if rep.Sent != 200 || rep.Recorded != 200 || len(reqs) != 200 {
		t.Fatalf("sent %d, recorded %d, lines %d; want 200 each", rep.Sent, rep.Recorded, len(reqs))
	}
	if got := srv.hits.Load(); got != 200 {
		t.Fatalf("server saw %d requests, want 200", got)
	}
	seqs := map[uint64]bool{}
	pods := map[string]int{}
	reused := 0
	for _, q := range reqs {
		if !q.OK() || q.Status != 200 || q.Bytes != 3 || q.Latency <= 0 {
			t.Fatalf("request %+v: want 200 OK with 3 bytes", q)
		}
		if q.T < 0 || q.Start.IsZero() {
			t.Fatalf("request %d has no start: %+v", q.Seq, q)
		}
		seqs[q.Seq] = true
		pods[q.Pod]++
		if q.Reused {
			reused++
		}
	}
	if len(seqs) != 200 {
		t.Fatalf("%d distinct seqs, want 200", len(seqs))
	}
	if pods["pod-a"] != 100 || pods["pod-b"] != 100 {
		t.Fatalf("pods = %v, want 100 each", pods)
	}
	if rep.ByPod["pod-a"] != 100 {
		t.Fatalf("report byPod = %v", rep.ByPod)
	}
	// Each request that did not reuse a connection opened one; the transport may also have dialed
	// spares that another request then used.
	if fresh := 200 - int64(reused); reused == 0 || fresh < 1 || fresh > srv.conns.Load() {
		t.Fatalf("reused %d with %d connections for 200 requests", reused, srv.conns.Load())
	}
	marks := tl.Filter(timeline.KindMark)
	if len(marks) != 2 || marks[0].Mark.Name != "load-start" || marks[1].Mark.Name != "load-end" {
		t.Fatalf("marks = %+v", marks)
	}
	if rep.Duration < 990*time.Millisecond || rep.Duration > 3*time.Second {
		t.Fatalf("duration %v for a 1s run", rep.Duration)
	}
}

func TestNewConnectionPerRequest(t *testing.T) {
	srv := newPodServer(t, "p")
	rep, reqs, _, err := run(t, Config{URL: srv.URL, Rate: 100, Count: 30, NewConnectionPerRequest: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != 30 || len(reqs) != 30 {
		t.Fatalf("sent %d, lines %d, want 30", rep.Sent, len(reqs))
	}
	if rep.Reused != 0 || srv.conns.Load() != 30 {
		t.Fatalf("reused %d over %d connections; want 0 reused over 30", rep.Reused, srv.conns.Load())
	}
}

func TestCountBound(t *testing.T) {
	srv := newPodServer(t, "p")
	rep, reqs, _, err := run(t, Config{URL: srv.URL, Rate: 1000, Count: 37})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != 37 || len(reqs) != 37 || srv.hits.Load() != 37 {
		t.Fatalf("sent %d, lines %d, server %d; want 37", rep.Sent, len(reqs), srv.hits.Load())
	}
}

func TestErrorClasses(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/503", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "busy", 503) })
	mux.HandleFunc("/404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	hijack := func(rst bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok && rst {
				tc.SetLinger(0) // close with RST
			}
			conn.Close()
		}
	}
	mux.HandleFunc("/close", hijack(false))
	mux.HandleFunc("/rst", hijack(true))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()

	for _, tc := range []struct {
		url    string
		want   timeline.ErrorClass
		status int
	}{
		{srv.URL + "/503", timeline.ErrHTTP5xx, 503},
		{srv.URL + "/404", timeline.ErrHTTPOther, 404},
		{srv.URL + "/slow", timeline.ErrTimeout, 0},
		{srv.URL + "/close", timeline.ErrReset, 0},
		{srv.URL + "/rst", timeline.ErrReset, 0},
		{refused, timeline.ErrRefused, 0},
	} {
		t.Run(string(tc.want)+tc.url[strings.LastIndex(tc.url, "/"):], func(t *testing.T) {
			rep, reqs, tl, err := run(t, Config{URL: tc.url, Rate: 50, Count: 5, Timeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if len(reqs) != 5 || rep.Recorded != 5 {
				t.Fatalf("%d lines, recorded %d; want 5", len(reqs), rep.Recorded)
			}
			for _, q := range reqs {
				if q.Error != tc.want || q.Status != tc.status || q.OK() {
					t.Fatalf("request %d: error %q status %d (%s); want %q status %d", q.Seq, q.Error, q.Status, q.Detail, tc.want, tc.status)
				}
				if tc.status == 0 && q.Detail == "" {
					t.Fatalf("request %d: transport error without detail", q.Seq)
				}
			}
			if rep.Failed != 5 || rep.Errors[tc.want] != 5 {
				t.Fatalf("report failed %d errors %v", rep.Failed, rep.Errors)
			}
			wins := tl.Filter(timeline.KindLoad)
			if len(wins) != 1 || wins[0].Load.Errors[string(tc.want)] != 5 || wins[0].Load.SuccessRatio != 0 {
				t.Fatalf("windows = %+v", wins)
			}
		})
	}
}

func TestStopMidRunRecordsEverything(t *testing.T) {
	var inFlight atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Add(1)
		defer inFlight.Add(-1)
		time.Sleep(80 * time.Millisecond)
	}))
	t.Cleanup(srv.Close)
	var buf bytes.Buffer
	l, err := Start(context.Background(), Config{URL: srv.URL, Rate: 300, Duration: time.Minute,
		Timeline: timeline.New(time.Now()), Requests: &buf})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	time.Sleep(300 * time.Millisecond)
	for inFlight.Load() == 0 {
		if time.Since(start) > 10*time.Second {
			t.Fatal("no request in flight to stop; the test would prove nothing")
		}
		time.Sleep(5 * time.Millisecond)
	}
	l.Stop()
	stoppedAfter := time.Since(start)
	l.Stop()
	rep, err := l.Wait()
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	reqs, err := timeline.LoadRequests(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent == 0 || rep.Sent != rep.Recorded || uint64(len(reqs)) != rep.Sent {
		t.Fatalf("sent %d, recorded %d, lines %d", rep.Sent, rep.Recorded, len(reqs))
	}
	if limit := uint64(300*stoppedAfter.Seconds()) + 30; rep.Sent > limit {
		t.Fatalf("sent %d in %s at 300/s: Stop did not stop", rep.Sent, stoppedAfter)
	}
	for _, q := range reqs {
		if !q.OK() {
			t.Fatalf("request in flight at Stop was cut: %+v", q)
		}
	}
}

func TestContextCancelStops(t *testing.T) {
	srv := newPodServer(t, "p")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	var buf bytes.Buffer
	rep, err := Run(ctx, Config{URL: srv.URL, Rate: 100, Duration: time.Minute, Timeline: timeline.New(time.Now()), Requests: &buf})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent == 0 || rep.Sent > 100 || rep.Sent != rep.Recorded {
		t.Fatalf("sent %d recorded %d after a 0.3s run", rep.Sent, rep.Recorded)
	}
}

// failingWriter accepts n bytes, then fails.
type failingWriter struct {
	mu sync.Mutex
	n  int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(p) > f.n {
		return 0, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestInvariantViolationIsReported(t *testing.T) {
	srv := newPodServer(t, "p")
	rep, err := Run(context.Background(), Config{URL: srv.URL, Rate: 2000, Count: 2000,
		Timeline: timeline.New(time.Now()), Requests: &failingWriter{n: 100 * 1024}})
	if !errors.Is(err, ErrUnrecorded) {
		t.Fatalf("err = %v, want ErrUnrecorded", err)
	}
	if !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want the write error too", err)
	}
	if rep.Sent != 2000 || rep.Recorded >= rep.Sent {
		t.Fatalf("sent %d recorded %d", rep.Sent, rep.Recorded)
	}
}

func TestRatePhases(t *testing.T) {
	srv := newPodServer(t, "p")
	rep, _, tl, err := run(t, Config{URL: srv.URL, Phases: []Phase{{Rate: 50, For: time.Second}, {Rate: 150, For: time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != 200 {
		t.Fatalf("sent %d, want 50 + 150", rep.Sent)
	}
	wins := tl.Filter(timeline.KindLoad)
	// Hits are placed exactly; a loaded machine may start one a little late, across a boundary.
	// Hits are never early, so the first second holds at most the 50 of the first phase and the
	// rest all start later; a loaded machine may start some late, so exact counts are not asserted.
	later := 0
	for _, w := range wins[1:] {
		later += w.Load.Sent
	}
	if len(wins) < 2 || wins[0].Load.Sent > 50 || wins[0].Load.Sent < 25 || later < 150 || wins[0].Load.Sent+later != 200 {
		for _, w := range wins {
			t.Logf("window %d: %+v", w.Load.Second, *w.Load)
		}
		t.Fatalf("want windows of 50 and 150")
	}
}

func TestSetRateMidRun(t *testing.T) {
	srv := newPodServer(t, "p")
	tl := timeline.New(time.Now())
	l, err := Start(context.Background(), Config{URL: srv.URL, Rate: 40, Duration: 2 * time.Second, Timeline: tl})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	before := time.Since(tl.Start())
	if prev := l.SetRate(200); prev != 40 {
		t.Fatalf("SetRate returned %g, want 40", prev)
	}
	after := time.Since(tl.Start())
	if l.Rate() != 200 {
		t.Fatalf("Rate() = %g after SetRate(200)", l.Rate())
	}
	rep, err := l.Wait()
	if err != nil {
		t.Fatal(err)
	}
	// 40/s until the change, 200/s after it, until 2 s. The pacer's clock starts a little after the
	// timeline's (the attack's goroutine): each 10 ms of that adds 1.6 hits, hence a slack of 10.
	lo := 40*after.Seconds() + 200*(2-after.Seconds())
	hi := 40*before.Seconds() + 200*(2-before.Seconds())
	if float64(rep.Sent) < lo-10 || float64(rep.Sent) > hi+10 {
		t.Fatalf("sent %d, want %.0f..%.0f for a change at %s", rep.Sent, lo, hi, before)
	}
}

func TestRefusesNonLoopback(t *testing.T) {
	for _, u := range []string{
		"http://10.0.0.1:8080/", "http://192.168.1.1:80/", "http://example.invalid:80/",
		"http://localhost:8080/", "https://127.0.0.1:8443/", "http://127.0.0.1/", "::",
	} {
		if err := CheckLoopbackURL(u); err == nil {
			t.Errorf("CheckLoopbackURL(%q) accepted", u)
		}
		if _, err := Start(context.Background(), Config{URL: u, Rate: 1, Count: 1, Timeline: timeline.New(time.Now())}); err == nil {
			t.Errorf("Start(%q) accepted", u)
		}
	}
	for _, u := range []string{"http://127.0.0.1:18080/", "http://127.0.0.2:80/x", "http://[::1]:8080/"} {
		if err := CheckLoopbackURL(u); err != nil {
			t.Errorf("CheckLoopbackURL(%q): %v", u, err)
		}
	}
	dial := loopbackDial(&net.Dialer{}, "")
	if _, err := dial(context.Background(), "tcp", "10.1.2.3:80"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("dialer let a non-loopback address through: %v", err)
	}
}

func TestConfigNeedsABound(t *testing.T) {
	_, err := Start(context.Background(), Config{URL: "http://127.0.0.1:1/", Rate: 5, Timeline: timeline.New(time.Now())})
	if err == nil || !strings.Contains(err.Error(), "bound") {
		t.Fatalf("unbounded run accepted: %v", err)
	}
	_, err = Start(context.Background(), Config{URL: "http://127.0.0.1:1/", Rate: 5, Count: 1})
	if err == nil {
		t.Fatal("run without a timeline accepted")
	}
}

// TestRetriedRequestIsRecorded cuts one request on a kept-alive connection (the server reads it and
// closes the connection without answering): net/http resends it on a new connection, the resend
// succeeds, and the recorder must still mark it Retried, since the server cut the first attempt.
func TestRetriedRequestIsRecorded(t *testing.T) {
	var mu sync.Mutex
	perConn := map[string]int{}
	cut := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		perConn[r.RemoteAddr]++
		doCut := !cut && perConn[r.RemoteAddr] == 3
		if doCut {
			cut = true
		}
		mu.Unlock()
		if doCut {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.Header().Set("X-Probegate-Pod", "p")
	}))
	t.Cleanup(srv.Close)
	rep, reqs, _, err := run(t, Config{URL: srv.URL, Rate: 20, Count: 12})
	if err != nil {
		t.Fatal(err)
	}
	if !cut {
		t.Fatal("no connection carried three requests: the test could not cut one")
	}
	retried := 0
	for _, q := range reqs {
		if q.Retried {
			retried++
			if !q.OK() {
				t.Errorf("the resent request failed: %+v", q)
			}
		}
	}
	if retried != 1 || rep.Retried != 1 {
		t.Fatalf("retried requests: %d recorded, report %d; want 1 (the cut one)", retried, rep.Retried)
	}
	if rep.OK != 12 {
		t.Fatalf("ok %d of 12: the resend should have succeeded", rep.OK)
	}
}

func TestCountsTallyWhileRunningAndMatchTheReport(t *testing.T) {
	mux := http.NewServeMux()
	var n atomic.Int64
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		if n.Add(1)%4 == 0 {
			http.Error(w, "busy", 503)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	began := time.Now()
	l, err := Start(context.Background(), Config{URL: srv.URL, Rate: 100, Duration: 2 * time.Second, Timeline: timeline.New(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	if c := l.Counts(); c.Completed > c.Sent || c.OK > c.Completed {
		t.Fatalf("counts at start = %+v", c)
	}
	time.Sleep(time.Second)
	mid := l.Counts()
	most := uint64(100*time.Since(began).Seconds()) + 5
	// About 100 issued by now (no more than 100/s since the start, however late a loaded host woke
	// the sleep); every completed one took at least 20 ms.
	if mid.Sent < 50 || mid.Sent > most || mid.Completed == 0 || mid.Completed > mid.Sent ||
		mid.OK >= mid.Completed || mid.Latency < time.Duration(mid.Completed)*20*time.Millisecond {
		t.Fatalf("counts after 1s = %+v", mid)
	}
	rep, err := l.Wait()
	if err != nil {
		t.Fatal(err)
	}
	end := l.Counts()
	if end.Sent != rep.Sent || end.Completed != rep.Recorded || end.OK != rep.OK || end.Completed-end.OK != rep.Failed {
		t.Fatalf("counts at the end %+v, report sent %d recorded %d ok %d failed %d", end, rep.Sent, rep.Recorded, rep.OK, rep.Failed)
	}
}
