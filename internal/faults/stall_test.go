package faults

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// fakeAdmin plays the target's admin port: a stall freezes its heartbeat for d.
type fakeAdmin struct {
	mu         sync.Mutex
	stallUntil time.Time
	stalls     []string
	forwarded  []string
}

func (a *fakeAdmin) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /admin/stall", func(w http.ResponseWriter, r *http.Request) {
		d, err := time.ParseDuration(r.URL.Query().Get("d"))
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		a.mu.Lock()
		a.stalls = append(a.stalls, d.String())
		a.stallUntil = time.Now().Add(d)
		a.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})
	mux.HandleFunc("GET /admin/state", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		age := 50.0
		if time.Now().Before(a.stallUntil) {
			age = 1500
		}
		json.NewEncoder(w).Encode(map[string]any{"heartbeat_age_ms": age, "live": age < 1000})
	})
	return mux
}

func TestStallPostsToTheChosenPodAndObserves(t *testing.T) {
	admin := &fakeAdmin{}
	srv := httptest.NewServer(admin.handler())
	t.Cleanup(srv.Close)
	fw := func(_ context.Context, ns, pod string, port int) (string, func(), error) {
		admin.mu.Lock()
		admin.forwarded = append(admin.forwarded, ns+"/"+pod+":"+itoa(port))
		admin.mu.Unlock()
		return strings.TrimPrefix(srv.URL, "http://"), func() {}, nil
	}
	tl := timeline.New(time.Now())
	s := NewStall(Recorder{Timeline: tl, Name: "faults[0]"}, choice(fakeTarget(), 5), 9090, 400*time.Millisecond, fw)
	s.ObserveAfter = 50 * time.Millisecond
	if err := s.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Inject(context.Background()); err != nil { // idempotent
		t.Fatal(err)
	}
	time.Sleep(450 * time.Millisecond)
	if err := s.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(admin.stalls) != 1 || admin.stalls[0] != "400ms" {
		t.Fatalf("stalls posted: %v", admin.stalls)
	}
	for _, f := range admin.forwarded {
		if f != "ns/"+s.Pod()+":9090" {
			t.Fatalf("forwarded to %s, want ns/%s:9090", f, s.Pod())
		}
	}
	var got []string
	for _, e := range tl.Filter(timeline.KindFault) {
		got = append(got, e.Fault.Action+"/"+e.Fault.Params["phase"]+"/"+e.Fault.Params["effect"])
		if e.Pod != s.Pod() {
			t.Fatalf("entry not aimed at the stalled pod: %+v", e)
		}
	}
	if strings.Join(got, " ") != "inject// observe/during/confirmed revert// observe/after/confirmed" {
		t.Fatalf("actions = %v", got)
	}
}

func TestStallRefusedByTheTargetIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"a stall is already queued"}`, http.StatusConflict)
	}))
	t.Cleanup(srv.Close)
	fw := func(context.Context, string, string, int) (string, func(), error) {
		return strings.TrimPrefix(srv.URL, "http://"), func() {}, nil
	}
	tl := timeline.New(time.Now())
	s := NewStall(Recorder{Timeline: tl}, choice(fakeTarget(), 5), 9090, time.Second, fw)
	if err := s.Inject(context.Background()); err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatalf("inject = %v, want the 409", err)
	}
	if tl.Len() != 0 {
		t.Fatal("a refused stall was recorded")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestStallNotShowingInTheHeartbeatIsNotObserved(t *testing.T) {
	// The admin port accepts the stall but the heartbeat stays fresh: the stall did not act.
	mux := http.NewServeMux()
	mux.HandleFunc("POST /admin/stall", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	mux.HandleFunc("GET /admin/state", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"heartbeat_age_ms": 40, "live": true, "live_reason": "ok"})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	fw := func(context.Context, string, string, int) (string, func(), error) {
		return strings.TrimPrefix(srv.URL, "http://"), func() {}, nil
	}
	tl := timeline.New(time.Now())
	s := NewStall(Recorder{Timeline: tl}, choice(fakeTarget(), 5), 9090, time.Second, fw)
	s.ObserveAfter = 10 * time.Millisecond
	if err := s.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	acts := tl.Filter(timeline.KindFault)
	if len(acts) != 2 || acts[1].Fault.Params[timeline.ParamEffect] != timeline.EffectNotObserved ||
		acts[1].Fault.Params[timeline.ParamPhase] != timeline.PhaseDuring || acts[1].Fault.Detail != "heartbeat age 40 ms, live=true ok" {
		t.Fatalf("actions = %+v", acts)
	}
}

func TestStallCancelledBeforeTheHeartbeatIsReadIsNotObserved(t *testing.T) {
	admin := &fakeAdmin{}
	srv := httptest.NewServer(admin.handler())
	t.Cleanup(srv.Close)
	fw := func(context.Context, string, string, int) (string, func(), error) {
		return strings.TrimPrefix(srv.URL, "http://"), func() {}, nil
	}
	tl := timeline.New(time.Now())
	s := NewStall(Recorder{Timeline: tl}, choice(fakeTarget(), 5), 9090, 4*time.Second, fw)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := s.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	acts := tl.Filter(timeline.KindFault)
	if len(acts) != 2 || acts[1].Fault.Action != timeline.FaultObserve || acts[1].Fault.Params[timeline.ParamEffect] != timeline.EffectNotObserved ||
		!strings.Contains(acts[1].Fault.Detail, "heartbeat not read") {
		t.Fatalf("actions = %+v", acts)
	}
}
