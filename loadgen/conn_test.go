package loadgen

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/probegate/probegate/internal/timeline"
)

// TestRecordsEachRequestsConnection checks that every request, answered or cut, carries the local
// address of the connection it went over: the server sees it as the remote address, names it in
// the pod header of odd-numbered requests and cuts the even-numbered ones without an answer.
func TestRecordsEachRequestsConnection(t *testing.T) {
	var mu sync.Mutex
	remote := map[string]string{} // vegeta seq → client address the server saw
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seq := r.Header.Get(vegetaSeqHeader)
		mu.Lock()
		remote[seq] = r.RemoteAddr
		mu.Unlock()
		if seq[len(seq)-1]%2 == 0 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.Header().Set(DefaultPodHeader, "pod-"+seq)
	}))
	t.Cleanup(srv.Close)
	// POST is not retried by the transport, so a cut request fails with its own connection.
	_, reqs, _, err := run(t, Config{URL: srv.URL, Method: http.MethodPost, Rate: 100, Count: 40, NewConnectionPerRequest: true})
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, q := range reqs {
		seq := strconv.FormatUint(q.Seq, 10)
		if q.Conn == "" || q.Conn != remote[seq] {
			t.Fatalf("request %d: conn %q, server saw %q", q.Seq, q.Conn, remote[seq])
		}
		// A connection per request is dialed after the request started, and before it ended.
		if ct, ok := q.ConnT(); !ok || ct < q.T || ct > q.End() {
			t.Fatalf("request %d at %v (to %v): connection opened at %v (dated %v)", q.Seq, q.T, q.End(), ct, ok)
		}
		if q.OK() {
			if q.Pod != "pod-"+seq || q.PodFrom != timeline.PodFromHeader {
				t.Fatalf("request %d: pod %q from %q", q.Seq, q.Pod, q.PodFrom)
			}
			continue
		}
		failed++
		if strings.Contains(q.Detail, q.Conn) {
			t.Fatalf("request %d: detail %q carries the connection", q.Seq, q.Detail)
		}
	}
	if failed != 20 {
		t.Fatalf("%d failed requests, want 20", failed)
	}
}

func TestIgnorePodHeader(t *testing.T) {
	srv := newPodServer(t, "pod-a")
	rep, reqs, _, err := run(t, Config{URL: srv.URL, Rate: 100, Count: 10, IgnorePodHeader: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range reqs {
		if q.Pod != "" || q.PodFrom != "" || q.Conn == "" {
			t.Fatalf("request %+v: want no pod and a connection", q)
		}
	}
	if len(rep.ByPod) != 0 {
		t.Fatalf("byPod = %v", rep.ByPod)
	}
}

func TestAllowHost(t *testing.T) {
	if err := CheckURL("http://172.29.0.2:30080/", "172.29.0.2"); err != nil {
		t.Fatalf("the allowed node address was refused: %v", err)
	}
	for _, c := range [][2]string{
		{"http://172.29.0.3:30080/", "172.29.0.2"},
		{"http://172.29.0.2:30080/", ""},
		{"http://node:30080/", "node"},
	} {
		if err := CheckURL(c[0], c[1]); err == nil {
			t.Errorf("CheckURL(%q, %q) accepted it", c[0], c[1])
		}
	}
	if _, err := loopbackDial(nil, "172.29.0.2")(t.Context(), "tcp", "10.0.0.1:80"); err == nil {
		t.Error("the dialer let another address through")
	}
}

// TestClientsHoldTheirOwnConnections: a light kept-alive load from one client runs over one
// connection; from N clients, taking requests in turn, over N, each reused.
func TestClientsHoldTheirOwnConnections(t *testing.T) {
	// A request that overlaps the one before it (a busy machine) makes a client dial a second
	// connection: one client holds at most two, five at least five.
	for _, c := range []struct{ clients, min, max int }{{1, 1, 2}, {5, 5, 10}} {
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		_, reqs, _, err := run(t, Config{URL: srv.URL, Rate: 50, Count: 40, Clients: c.clients})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns := map[string]int{}
		for _, q := range reqs {
			conns[q.Conn]++
		}
		if len(conns) < c.min || len(conns) > c.max {
			t.Errorf("%d clients: %d connections %v, want %d to %d", c.clients, len(conns), conns, c.min, c.max)
		}
	}
	if _, _, _, err := run(t, Config{URL: "http://127.0.0.1:1/", Rate: 1, Count: 1, Clients: -1}); err == nil {
		t.Error("negative clients accepted")
	}
}
