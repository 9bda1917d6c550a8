package runner

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/frontdoor"
	"github.com/probegate/probegate/internal/timeline"
)

func TestDoorRunKubeProxyIsNil(t *testing.T) {
	r := &Runner{}
	d, err := r.openDoor(context.Background(), &deploy.Target{}, "/", slog.Default())
	if d != nil || err != nil {
		t.Fatalf("kube-proxy: %v, %v", d, err)
	}
	spec := loadSpec{URL: "http://127.0.0.1:18080/work"}
	if got := d.loadSpec(spec); got.URL != spec.URL || got.Header != nil {
		t.Errorf("a nil door changed the load: %+v", got)
	}
	reqs := []timeline.Request{{Seq: 1}}
	if out, sum := d.apply(context.Background(), reqs, nil, nil); len(out) != 1 || sum != nil {
		t.Errorf("a nil door attributed: %v %v", out, sum)
	}
	d.stop()
}

func TestDoorRunIngressNeedsTheHostLoad(t *testing.T) {
	r := &Runner{Opts: Options{LoadAgents: 2}}
	_, err := r.openDoor(context.Background(), &deploy.Target{Door: frontdoor.Opened{Route: frontdoor.Route{Kind: "ingress"}}}, "/", slog.Default())
	if err == nil || !strings.Contains(err.Error(), "leave out --load in-cluster") {
		t.Errorf("err = %v", err)
	}
}

func TestDoorRunLoadSpec(t *testing.T) {
	d := &doorRun{door: frontdoor.Opened{Route: frontdoor.Route{Kind: "ingress", Host: "shop.example"}, Namespace: "pg-s1"},
		baseURL: "http://172.18.0.2:31234", nodeIP: "172.18.0.2"}
	got := d.loadSpec(loadSpec{URL: "http://127.0.0.1:18080/slow?d=20s", Rate: 10})
	if got.URL != "http://172.18.0.2:31234/slow?d=20s" || got.AllowHost != "172.18.0.2" || got.Rate != 10 {
		t.Errorf("spec %+v", got)
	}
	if got.Header.Get("Host") != "shop.example" || got.Header.Get(frontdoor.LoadIDHeader) != "pg-s1-1" {
		t.Errorf("header %v", got.Header)
	}
	if again := d.loadSpec(loadSpec{URL: "http://127.0.0.1:18080/"}); again.Header.Get(frontdoor.LoadIDHeader) != "pg-s1-2" || d.loadID != "pg-s1-2" {
		t.Errorf("a second load's id: %v", again.Header)
	}
}

type fakeRecorder struct {
	loadID  string
	stopped bool
}

func (f *fakeRecorder) Attribute(_ context.Context, loadID string, reqs []timeline.Request, _ []timeline.Entry, _ time.Duration) ([]timeline.Request, timeline.DoorAttribution, error) {
	f.loadID = loadID
	out := append([]timeline.Request(nil), reqs...)
	out[0].Pod, out[0].PodFrom = "web-a", "ingress"
	return out, timeline.DoorAttribution{Door: "ingress", Lines: 2, Found: 1}, nil
}

func (f *fakeRecorder) Stop() { f.stopped = true }

func TestDoorRunApply(t *testing.T) {
	rec := &fakeRecorder{}
	d := &doorRun{door: frontdoor.Opened{Route: frontdoor.Route{Kind: "ingress"}}, rec: rec, loadID: "ns-1", log: slog.Default()}
	reqs := []timeline.Request{{Seq: 0, Status: 200}, {Seq: 1, Status: 200, Pod: "web-b", PodFrom: timeline.PodFromHeader}}
	out, sum := d.apply(context.Background(), reqs, nil, nil)
	if rec.loadID != "ns-1" || out[0].Pod != "web-a" {
		t.Errorf("load %q, requests %+v", rec.loadID, out)
	}
	if sum == nil || sum.Door == nil || sum.Door.Lines != 2 || sum.ByDoor != 1 || sum.ByHeader != 1 || sum.Coverage != 1 {
		t.Errorf("attribution %+v", sum)
	}
	d.stop()
	if !rec.stopped {
		t.Error("not stopped")
	}
}

func TestWaitRoute(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "shop.example" || calls.Add(1) < 3 {
			w.WriteHeader(http.StatusNotFound) // the controller has not read the Ingress yet
		}
	}))
	defer srv.Close()
	if err := waitRoute(context.Background(), srv.URL+"/work", "shop.example", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	err := waitRoute(context.Background(), srv.URL+"/work", "other.example", time.Second)
	if err == nil || !strings.Contains(err.Error(), `did not answer below 400 within 1s: status 404`) {
		t.Errorf("err = %v", err)
	}
	// A request still unanswered when the wait ends says less than the answer before it (under a
	// loaded host the last poll is often cut by the deadline).
	var slow atomic.Int32
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slow.Add(1) > 1 {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	defer stuck.Close()
	err = waitRoute(context.Background(), stuck.URL+"/work", "", 1200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), `within 1.2s: status 404`) {
		t.Errorf("cut by the deadline: err = %v", err)
	}
}
