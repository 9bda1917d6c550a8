package runner

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/timeline"
)

// The load adapter drives real HTTP load through loadgen and hands back every request.
func TestVegetaLoadRecordsEveryRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Probegate-Pod", "target-a")
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	tl := timeline.New(time.Now())
	run, err := vegetaLoad{}.Start(context.Background(), loadSpec{URL: srv.URL + "/work", Rate: 40, Duration: time.Second, KeepAlive: true, Timeout: time.Second}, tl)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := run.Wait()
	if err != nil {
		t.Fatal(err)
	}
	// The overload fault proves its effect from the load's tally: the run must hand it over.
	meter, ok := run.(faults.LoadMeter)
	if !ok {
		t.Fatalf("%T does not report its tally (faults.LoadMeter)", run)
	}
	if c := meter.Counts(); c.Sent != uint64(len(reqs)) || c.Completed != c.Sent || c.OK != c.Sent {
		t.Fatalf("tally %+v for %d requests", c, len(reqs))
	}
	if len(reqs) < 30 || len(reqs) > 41 {
		t.Fatalf("%d requests recorded for 40 rps × 1 s", len(reqs))
	}
	for _, r := range reqs {
		if !r.OK() || r.Pod != "target-a" {
			t.Fatalf("request %+v", r)
		}
	}
	if len(tl.Filter(timeline.KindLoad)) == 0 {
		t.Errorf("no load windows on the timeline")
	}
}
