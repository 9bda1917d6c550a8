package faults

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxyserver "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/probegate/probegate/internal/timeline"
)

// syncBuffer is a bytes.Buffer safe for toxiproxy's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAcceptedFromReadsToxiproxysOwnLog: the connections a proxy accepted are counted from the log
// toxiproxy itself writes (the real server, in process), by client IP, for that proxy only.
func TestAcceptedFromReadsToxiproxysOwnLog(t *testing.T) {
	var log syncBuffer
	srv := toxiproxyserver.NewServer(toxiproxyserver.NewMetricsContainer(prometheus.NewRegistry()),
		zerolog.New(&log).With().Timestamp().Logger().Level(zerolog.InfoLevel))
	api := httptest.NewServer(srv.Routes())
	t.Cleanup(func() {
		api.Close()
		srv.Collection.Clear()
	})
	client, err := NewToxiproxyClient(api.URL)
	if err != nil {
		t.Fatal(err)
	}
	db := fakePostgres(t)
	pg, err := client.CreateProxy("postgres", "127.0.0.1:0", db)
	if err != nil {
		t.Fatal(err)
	}
	other, err := client.CreateProxy("redis", "127.0.0.1:0", db)
	if err != nil {
		t.Fatal(err)
	}
	probe := func(addr string) {
		if _, err := (PostgresRoundTrip{Endpoint: StaticEndpoint(addr), Via: "test"}).Measure(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	probe(pg.Listen)
	probe(pg.Listen)
	probe(other.Listen)
	deadline := time.Now().Add(2 * time.Second)
	for strings.Count(log.String(), "Accepted client") < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got, err := acceptedFrom(strings.NewReader(log.String()+"not json Accepted client\n"), "postgres",
		map[string]string{"127.0.0.1": "web-0", "10.244.0.9": "web-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["web-0"] != 2 {
		t.Fatalf("accepted = %v, want web-0=2 (the redis proxy's and other lines not counted); log:\n%s", got, log.String())
	}
}

func TestExposureSaysWhatTheProxySaw(t *testing.T) {
	e := Exposure{Proxy: "postgres", ByPod: map[string]int{"web-b": 2, "web-a": 3}, Unseen: []string{"web-c"}}
	if n := e.Note(); n != `toxiproxy's log: proxy "postgres" accepted 5 connections from 2 of the target's 3 pods so far, none from web-c` {
		t.Errorf("note = %q", n)
	}
	p := e.Params()
	if p["target_connections"] != "web-a=3,web-b=2" || p["target_pods_unseen"] != "web-c" {
		t.Errorf("params = %v", p)
	}
}

// exposedProbe is a round trip that also reports a fixed exposure.
type exposedProbe struct {
	PostgresRoundTrip
	e Exposure
}

func (p exposedProbe) TargetPath(context.Context) Exposure { return p.e }

// The proof of a DB fault carries what the proxy saw of the target beside its measurement, and
// only while the fault is active.
func TestDBProofCarriesTheTargetsPath(t *testing.T) {
	fx := newToxiproxyFixture(t)
	tl := timeline.New(time.Now())
	probe := exposedProbe{PostgresRoundTrip: fx.probe, e: Exposure{Proxy: "postgres", ByPod: map[string]int{"web-0": 4}}}
	f := NewDBDown(Recorder{Timeline: tl, Name: "d"}, fx.client, "postgres", probe)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := f.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
	acts := actions(tl)
	if len(acts) != 4 {
		t.Fatalf("actions = %+v", acts)
	}
	during, after := acts[1], acts[3]
	if during.Params["target_connections"] != "web-0=4" || !strings.Contains(during.Detail, `proxy "postgres" accepted 4 connections from 1 of the target's 1 pods`) {
		t.Errorf("during: %+v", during)
	}
	if _, ok := after.Params["target_connections"]; ok {
		t.Errorf("after: %+v", after)
	}
}

// With no accepted connection in the proxy's log (the fake clientset's log is "fake logs"), every
// target pod is named unseen: the target may reach its database another way.
func TestProxyExposureNamesTheTargetPodsTheProxyNeverSaw(t *testing.T) {
	pod := func(name, app, ip string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": app}},
			Status: corev1.PodStatus{PodIP: ip}}
	}
	cs := fake.NewClientset(pod("web-1", "web", "10.244.0.8"), pod("web-0", "web", "10.244.0.7"), pod("toxiproxy-0", "toxiproxy", "10.244.0.5"))
	e := proxyExposure(context.Background(), cs, "ns", "app=toxiproxy", "app=web", "postgres")
	if e.Err != nil || len(e.ByPod) != 0 || strings.Join(e.Unseen, ",") != "web-0,web-1" {
		t.Fatalf("exposure = %+v", e)
	}
	if e := proxyExposure(context.Background(), cs, "ns", "app=none", "app=web", "postgres"); e.Err == nil || !strings.Contains(e.Note(), "unknown") {
		t.Fatalf("no toxiproxy pod: %+v", e)
	}
}

// A DB fault whose proxy has accepted no connection from any target pod is not shown to act on the
// target (audit N11: the app reaches its database around the proxy), however well the round trip
// through the proxy shows the fault; one pod on the path is enough, and a log that could not be read
// leaves the measurement to decide. A log that shows no accepted connection at all (db-down disables
// the proxy before probegate's own probe has gone through it) does not show the target on the path
// either: on the cluster that PASSed statefulset/bypass × db-outage's verdicts again (2026-12-07).
func TestDBProofUnprovenWhenTheTargetBypassesTheProxy(t *testing.T) {
	for _, tc := range []struct {
		name      string
		e         Exposure
		confirmed bool
	}{
		{"bypassed", Exposure{Proxy: "postgres", ByPod: map[string]int{}, Unseen: []string{"web-0", "web-1"}}, false},
		{"one pod on the path", Exposure{Proxy: "postgres", ByPod: map[string]int{"web-1": 1}, Unseen: []string{"web-0"}}, true},
		{"log unreadable", Exposure{Proxy: "postgres", Err: fmt.Errorf("no log")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newToxiproxyFixture(t)
			tl := timeline.New(time.Now())
			f := NewDBDown(Recorder{Timeline: tl, Name: "d"}, fx.client, "postgres", exposedProbe{PostgresRoundTrip: fx.probe, e: tc.e})
			if err := f.Inject(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := f.Revert(context.Background()); err != nil {
				t.Fatal(err)
			}
			during := actions(tl)[1]
			got := during.Params[timeline.ParamEffect] == timeline.EffectConfirmed
			if got != tc.confirmed || (!got && !strings.Contains(during.Detail, "not shown to reach the target")) {
				t.Errorf("during: effect %q, want confirmed %v: %s", during.Params[timeline.ParamEffect], tc.confirmed, during.Detail)
			}
			w := timeline.FaultWindows(tl.Entries())
			if len(w) != 1 || w[0].Acted() != tc.confirmed {
				t.Errorf("fault windows %+v: acted, want %v", w, tc.confirmed)
			}
		})
	}
}
