package loadgen

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Every request carries Config.Header, Host included, and vegeta's sequence number, which is the
// recorded request's Seq (a front door's access log is matched to the requests by it).
func TestHeaderAndSeq(t *testing.T) {
	var mu sync.Mutex
	seen := map[uint64]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seq, err := strconv.ParseUint(r.Header.Get("X-Vegeta-Seq"), 10, 64)
		if err != nil {
			w.WriteHeader(400)
			return
		}
		mu.Lock()
		seen[seq] = r.Host + " " + r.Header.Get("X-Probegate-Load")
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	header := http.Header{"Host": {"shop.example"}, "X-Probegate-Load": {"L7"}}
	_, reqs, _, err := run(t, Config{URL: srv.URL + "/", Rate: 100, Count: 10, Timeout: time.Second, Header: header})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 10 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, q := range reqs {
		if q.Status != 200 || seen[q.Seq] != "shop.example L7" {
			t.Errorf("seq %d: status %d, server saw %q", q.Seq, q.Status, seen[q.Seq])
		}
	}
	if header.Get("X-Vegeta-Seq") != "" {
		t.Error("the config's header was written to")
	}
}
