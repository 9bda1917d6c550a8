package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/loadgen"
)

// target answers every request naming one of two pods in the pod header.
func target(t *testing.T) *httptest.Server {
	t.Helper()
	var n atomic.Uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(loadgen.DefaultPodHeader, []string{"pod-a", "pod-b"}[n.Add(1)%2])
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func agents(t *testing.T, n int) []Transport {
	t.Helper()
	var ts []Transport
	for i := range n {
		srv := httptest.NewServer(NewServer(nil).Handler())
		t.Cleanup(srv.Close)
		ts = append(ts, HTTPTransport{Base: srv.URL, Label: string(rune('a' + i))})
	}
	return ts
}

// TestGroupMergesAgents: three real agents (loadgen inside, over HTTP) split the rate, and the
// group gets every request each sent, numbered anew, on the harness's timeline, with windows.
func TestGroupMergesAgents(t *testing.T) {
	tgt := target(t)
	tl := timeline.New(time.Now())
	var seen atomic.Int64
	g, err := Start(context.Background(), agents(t, 3), Config{
		Load:      StartRequest{URL: tgt.URL + "/", Rate: 90, Duration: 2 * time.Second, Timeout: 2 * time.Second, KeepAlive: true},
		Timeline:  tl,
		Sources:   []string{"a@n1", "b@n2", "c@n1"},
		OnRequest: func(timeline.Request) { seen.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := g.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) < 170 || len(reqs) > 190 {
		t.Fatalf("want about 180 requests (90/s for 2 s), got %d", len(reqs))
	}
	if int(seen.Load()) != len(reqs) {
		t.Errorf("OnRequest saw %d of %d requests", seen.Load(), len(reqs))
	}
	pods, sources := map[string]int{}, map[string]int{}
	for i, q := range reqs {
		if q.Seq != uint64(i) {
			t.Fatalf("request %d has seq %d: want them numbered 0..n-1 in start order", i, q.Seq)
		}
		if i > 0 && q.Start.Before(reqs[i-1].Start) {
			t.Fatalf("request %d starts before request %d", i, i-1)
		}
		if d := q.T - tl.Since(q.Start); d < -time.Millisecond || d > time.Millisecond {
			t.Fatalf("request %d: T %v is not its start on the harness timeline (%v)", i, q.T, tl.Since(q.Start))
		}
		if !q.OK() {
			t.Fatalf("request %d failed: %+v", i, q)
		}
		pods[q.Pod]++
		sources[q.Source]++
	}
	if len(sources) != 3 || sources["b@n2"] < 50 {
		t.Errorf("requests by source %v: want each agent's share (about 60) named", sources)
	}
	if pods["pod-a"] == 0 || pods["pod-b"] == 0 {
		t.Errorf("pod header not read: %v", pods)
	}
	var windows, sent int
	for _, e := range tl.Filter(timeline.KindLoad) {
		windows++
		sent += e.Load.Sent
	}
	if windows < 2 || sent != len(reqs) {
		t.Errorf("windows: %d covering %d requests, want ≥2 covering %d", windows, sent, len(reqs))
	}
}

// skewed answers /clock as an agent whose clock runs ahead by skew, answering after delay.
type skewed struct {
	skew, delay time.Duration
}

func (s skewed) Name() string { return "skewed" }
func (s skewed) Do(_ context.Context, _, path string, _ []byte) (io.ReadCloser, error) {
	time.Sleep(s.delay)
	now := time.Now().Add(s.skew)
	time.Sleep(s.delay)
	return io.NopCloser(strings.NewReader(`{"now":"` + now.Format(time.RFC3339Nano) + `"}`)), nil
}

// TestMeasureOffset: the offset is the agent's clock minus the harness's at the round trip's
// midpoint, within half the round trip.
func TestMeasureOffset(t *testing.T) {
	for _, skew := range []time.Duration{5 * time.Second, -1500 * time.Millisecond, 0} {
		off, rtt, err := measureOffset(context.Background(), skewed{skew: skew, delay: 2 * time.Millisecond}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if d := off - skew; d < -rtt/2-time.Millisecond || d > rtt/2+time.Millisecond {
			t.Errorf("skew %v: measured %v (rtt %v)", skew, off, rtt)
		}
	}
}

// cutting breaks an agent's first record stream after n lines, or drops the nth request line of
// every stream (drop) — a lossy path that must not go unnoticed.
type cutting struct {
	Transport
	n    int
	drop bool
	cut  atomic.Bool
}

func (c *cutting) Do(ctx context.Context, method, path string, body []byte) (io.ReadCloser, error) {
	rc, err := c.Transport.Do(ctx, method, path, body)
	if err != nil || !strings.HasPrefix(path, "/records") || (!c.drop && c.cut.Load()) {
		return rc, err
	}
	pr, pw := io.Pipe()
	go func() {
		defer rc.Close()
		sc := bufio.NewScanner(rc)
		for i := 0; sc.Scan(); i++ {
			line := append(sc.Bytes(), '\n')
			if i == c.n && c.drop && bytes.Contains(line, []byte(`"r"`)) {
				continue
			}
			if i == c.n && !c.drop {
				c.cut.Store(true)
				pw.CloseWithError(errors.New("connection reset"))
				return
			}
			if _, err := pw.Write(line); err != nil {
				return
			}
		}
		pw.Close()
	}()
	return pr, nil
}

// TestGroupResumesAndCountsLosses: a record stream that breaks is resumed where it broke (nothing
// lost, nothing doubled); a stream that loses a request fails the load as unrecorded.
func TestGroupResumesAndCountsLosses(t *testing.T) {
	tgt := target(t)
	run := func(wrap func(Transport) Transport) ([]timeline.Request, error) {
		ts := agents(t, 2)
		ts[0] = wrap(ts[0])
		g, err := Start(context.Background(), ts, Config{
			Load:     StartRequest{URL: tgt.URL + "/", Rate: 60, Duration: time.Second, Timeout: time.Second},
			Timeline: timeline.New(time.Now()),
		})
		if err != nil {
			t.Fatal(err)
		}
		return g.Wait()
	}
	reqs, err := run(func(tr Transport) Transport { return &cutting{Transport: tr, n: 5} })
	if err != nil {
		t.Fatalf("a resumed stream failed the load: %v", err)
	}
	if len(reqs) < 55 {
		t.Fatalf("want about 60 requests, got %d", len(reqs))
	}
	_, err = run(func(tr Transport) Transport { return &cutting{Transport: tr, n: 3, drop: true} })
	if !errors.Is(err, loadgen.ErrUnrecorded) {
		t.Fatalf("a lost request went unnoticed: err %v", err)
	}
}

// TestGroupStartFailsCleanly: an agent that refuses the load stops the ones already started.
func TestGroupStartFailsCleanly(t *testing.T) {
	tgt := target(t)
	ts := agents(t, 2)
	first := NewServer(nil)
	srv := httptest.NewServer(first.Handler())
	t.Cleanup(srv.Close)
	ts[0] = HTTPTransport{Base: srv.URL, Label: "first"}
	ts[1] = HTTPTransport{Base: ts[1].(HTTPTransport).Base, Label: "bad"}
	// The second agent is asked for a load whose URL it must refuse (not loopback).
	bad := &refuseStart{Transport: ts[1]}
	_, err := Start(context.Background(), []Transport{ts[0], bad}, Config{
		Load:     StartRequest{URL: tgt.URL + "/", Rate: 10, Duration: time.Minute, Timeout: time.Second},
		Timeline: timeline.New(time.Now()),
	})
	if err == nil || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("want the second agent's refusal, got %v", err)
	}
	select {
	case <-first.current().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the first agent's load was not stopped")
	}
}

type refuseStart struct{ Transport }

func (r *refuseStart) Do(ctx context.Context, method, path string, body []byte) (io.ReadCloser, error) {
	if path == "/start" {
		body = bytes.Replace(body, []byte("127.0.0.1"), []byte("192.0.2.1"), 1)
	}
	return r.Transport.Do(ctx, method, path, body)
}
