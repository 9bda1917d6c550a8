package faults

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	toxiproxyserver "github.com/Shopify/toxiproxy/v2"
	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/probegate/probegate/internal/timeline"
)

// fakePostgres answers every SSLRequest with 'N', as a PostgreSQL server without TLS does.
func fakePostgres(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var req [8]byte
				if _, err := io.ReadFull(c, req[:]); err != nil {
					return
				}
				c.Write([]byte{'N'})
				var n [4]byte // StartupMessage: length, then the rest
				if _, err := io.ReadFull(c, n[:]); err != nil {
					return
				}
				if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(n[:]))-4); err != nil {
					return
				}
				c.Write([]byte{'R', 0, 0, 0, 8, 0, 0, 0, 0}) // AuthenticationOk
				io.Copy(io.Discard, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// toxiproxyFixture runs toxiproxy in process with a proxy "postgres" in front of a fake PostgreSQL.
type toxiproxyFixture struct {
	client *toxiproxy.Client
	listen string // the proxy's address
	probe  PostgresRoundTrip
}

func newToxiproxyFixture(t *testing.T) *toxiproxyFixture {
	t.Helper()
	srv := toxiproxyserver.NewServer(toxiproxyserver.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	api := httptest.NewServer(srv.Routes())
	t.Cleanup(func() {
		api.Close()
		srv.Collection.Clear()
	})
	client, err := NewToxiproxyClient(api.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := client.CreateProxy("postgres", "127.0.0.1:0", fakePostgres(t))
	if err != nil {
		t.Fatalf("create proxy: %v", err)
	}
	return &toxiproxyFixture{client: client, listen: p.Listen,
		probe: PostgresRoundTrip{Endpoint: StaticEndpoint(p.Listen), Timeout: 2 * time.Second, Via: "proxy postgres"}}
}

func (f *toxiproxyFixture) toxics(t *testing.T) toxiproxy.Toxics {
	t.Helper()
	p, err := f.client.Proxy("postgres")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := p.Toxics()
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func actions(tl *timeline.Timeline) []timeline.FaultAction {
	var out []timeline.FaultAction
	for _, e := range tl.Filter(timeline.KindFault) {
		out = append(out, *e.Fault)
	}
	return out
}

func TestDBLatencyInjectObserveRevert(t *testing.T) {
	fx := newToxiproxyFixture(t)
	if d, err := fx.probe.Measure(context.Background()); err != nil || d > 200*time.Millisecond {
		t.Fatalf("baseline round trip %v, %v", d, err)
	}
	tl := timeline.New(time.Now())
	f := NewDBLatency(Recorder{Timeline: tl, Name: "faults[0]"}, fx.client, "postgres", 300*time.Millisecond, 0, fx.probe)
	ctx := context.Background()
	for range 2 { // idempotent
		if err := f.Inject(ctx); err != nil {
			t.Fatalf("inject: %v", err)
		}
	}
	ts := fx.toxics(t)
	if len(ts) != 1 || ts[0].Type != "latency" || ts[0].Toxicity != 1 || ts[0].Attributes["latency"].(float64) != 300 {
		t.Fatalf("toxics after inject = %+v", ts)
	}
	for range 2 {
		if err := f.Revert(ctx); err != nil {
			t.Fatalf("revert: %v", err)
		}
	}
	if ts := fx.toxics(t); len(ts) != 0 {
		t.Fatalf("toxics after revert = %+v", ts)
	}
	acts := actions(tl)
	want := []string{timeline.FaultInject, timeline.FaultObserve, timeline.FaultRevert, timeline.FaultObserve}
	if len(acts) != len(want) {
		t.Fatalf("actions = %+v", acts)
	}
	for i, a := range acts {
		if a.Action != want[i] || a.Type != TypeDBLatency || a.Name != "faults[0]" || a.Target != "postgres" {
			t.Fatalf("action %d = %+v, want %s", i, a, want[i])
		}
	}
	if acts[1].Params["effect"] != "confirmed" || acts[1].Params["phase"] != "during" {
		t.Fatalf("observe during = %+v", acts[1])
	}
	if acts[3].Params["effect"] != "confirmed" || acts[3].Params["phase"] != "after" {
		t.Fatalf("observe after = %+v", acts[3])
	}
	during, err1 := strconv.ParseFloat(acts[1].Params["latency_ms"], 64)
	after, err2 := strconv.ParseFloat(acts[3].Params["latency_ms"], 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("latency_ms params: %v, %v", err1, err2)
	}
	if during < 300 || after > 200 {
		t.Fatalf("round trip during %vms after %vms; want >= 300 during and fast after", during, after)
	}
}

func TestDBTimeoutSwallowsReplies(t *testing.T) {
	if os.Getenv("PROBEGATE_TOXIPROXY_TIMEOUT_TEST") != "1" {
		// Seen here: with the in-process toxiproxy v2.12.0 server, removing a timeout toxic that holds
		// a connection sometimes blocks for minutes while the test process grows by ~80 MB/s (16 GB
		// before it was killed). The db-timeout fault itself is proven on the kind cluster by
		// TestIntegrationDBFaults; run this one with PROBEGATE_TOXIPROXY_TIMEOUT_TEST=1.
		t.Skip("in-process toxiproxy timeout-toxic removal can hang and leak (set PROBEGATE_TOXIPROXY_TIMEOUT_TEST=1)")
	}
	fx := newToxiproxyFixture(t)
	fx.probe.Timeout = 500 * time.Millisecond
	tl := timeline.New(time.Now())
	// The toxic closes held connections after 2 s: with 0 (hold forever) toxiproxy's toxic removal
	// can block on a held connection for minutes, which is toxiproxy's bug, not what this tests.
	f := NewDBTimeout(Recorder{Timeline: tl, Name: "t"}, fx.client, "postgres", 2*time.Second, fx.probe)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.probe.Measure(context.Background()); err == nil || !strings.Contains(err.Error(), "no reply") {
		t.Fatalf("probe during db-timeout: %v, want no reply", err)
	}
	if err := f.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
	acts := actions(tl)
	if len(acts) != 4 || acts[1].Params["effect"] != "confirmed" || acts[1].Params["error"] == "" {
		t.Fatalf("actions = %+v", acts)
	}
	if acts[3].Params["effect"] != "confirmed" || acts[3].Params["error"] != "" {
		t.Fatalf("recovery not observed: %+v", acts[3])
	}
}

func TestDBDownDisablesProxy(t *testing.T) {
	fx := newToxiproxyFixture(t)
	tl := timeline.New(time.Now())
	f := NewDBDown(Recorder{Timeline: tl, Name: "d"}, fx.client, "postgres", fx.probe)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, err := fx.client.Proxy("postgres")
	if err != nil || p.Enabled {
		t.Fatalf("proxy after db-down: %+v, %v", p, err)
	}
	if err := f.Revert(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p, _ := fx.client.Proxy("postgres"); !p.Enabled {
		t.Fatal("proxy still disabled after revert")
	}
	acts := actions(tl)
	if len(acts) != 4 || acts[1].Action != timeline.FaultObserve || acts[1].Params[timeline.ParamEffect] != timeline.EffectConfirmed {
		t.Fatalf("actions = %+v", acts)
	}
	if acts[3].Params["effect"] != "confirmed" {
		t.Fatalf("after revert: %+v", acts[3])
	}
}

func TestLatencyNotObservedIsRecordedHonestly(t *testing.T) {
	fx := newToxiproxyFixture(t)
	tl := timeline.New(time.Now())
	// The probe goes straight to the database, around the proxy: the toxic cannot show.
	direct := PostgresRoundTrip{Endpoint: StaticEndpoint(fakePostgres(t)), Via: "direct"}
	f := NewDBLatency(Recorder{Timeline: tl}, fx.client, "postgres", 300*time.Millisecond, 0, direct)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer f.Revert(context.Background())
	if acts := actions(tl); len(acts) != 2 || acts[1].Params["effect"] != "not-observed" {
		t.Fatalf("actions = %+v", acts)
	}
}

func TestToxiproxyClientIsLoopbackOnly(t *testing.T) {
	for _, u := range []string{"http://10.0.0.5:8474", "http://toxiproxy:8474", "::"} {
		if _, err := NewToxiproxyClient(u); err == nil {
			t.Errorf("NewToxiproxyClient(%q) accepted", u)
		}
	}
	if _, err := NewToxiproxyClient("http://127.0.0.1:18474"); err != nil {
		t.Error(err)
	}
}

func TestMissingProxyIsAnError(t *testing.T) {
	fx := newToxiproxyFixture(t)
	tl := timeline.New(time.Now())
	f := NewDBDown(Recorder{Timeline: tl}, fx.client, "nope", nil)
	if err := f.Inject(context.Background()); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("inject on a missing proxy: %v", err)
	}
	if len(actions(tl)) != 0 {
		t.Fatal("a failed inject was recorded as injected")
	}
}

func TestDBFaultWithoutAProbeSaysItsEffectWasNotMeasured(t *testing.T) {
	fx := newToxiproxyFixture(t)
	for _, f := range []Fault{
		NewDBLatency(Recorder{Name: "latency"}, fx.client, "postgres", 300*time.Millisecond, 0, nil),
		NewDBDown(Recorder{Name: "down"}, fx.client, "postgres", nil),
	} {
		tl := timeline.New(time.Now())
		switch f := f.(type) {
		case *toxic:
			f.Recorder.Timeline = tl
		case *DBDown:
			f.Recorder.Timeline = tl
		}
		if err := f.Inject(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := f.Revert(context.Background()); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range actions(tl) {
			got = append(got, a.Action+"/"+a.Params[timeline.ParamPhase]+"/"+a.Params[timeline.ParamEffect])
		}
		if strings.Join(got, " ") != "inject// observe/during/not-observed revert// observe/after/not-observed" {
			t.Fatalf("%s: actions = %v", f.Type(), got)
		}
		if d := actions(tl)[1].Detail; !strings.Contains(d, "no database probe") {
			t.Fatalf("%s: detail = %q", f.Type(), d)
		}
	}
}

// failingOnce is a probe whose first measurement fails (a stalled port-forward), then measures for real.
type failingOnce struct {
	DBProbe
	calls int
}

func (p *failingOnce) Measure(ctx context.Context) (time.Duration, error) {
	p.calls++
	if p.calls == 1 {
		return 7 * time.Second, errors.New("StartupMessage: no reply within 7s")
	}
	return p.DBProbe.Measure(ctx)
}

func TestLatencyProofMeasuresAgainWhenTheProbeItselfFailed(t *testing.T) {
	fx := newToxiproxyFixture(t)
	tl := timeline.New(time.Now())
	probe := &failingOnce{DBProbe: fx.probe}
	f := NewDBLatency(Recorder{Timeline: tl}, fx.client, "postgres", 300*time.Millisecond, 0, probe)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer f.Revert(context.Background())
	acts := actions(tl)
	if len(acts) != 2 || acts[1].Params["effect"] != timeline.EffectConfirmed || !strings.Contains(acts[1].Detail, "second attempt (the first failed: StartupMessage: no reply") {
		t.Fatalf("actions = %+v", acts)
	}
	if probe.calls != 2 {
		t.Fatalf("probe measured %d times, want 2", probe.calls)
	}
}
