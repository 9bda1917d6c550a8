package faults

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// TestDBOutageProofNeedsTheProbeToHaveRun: db-down and db-timeout are proven by a round trip through
// the proxy that fails. A measurement that never reached the proxy (the port-forward to it could not
// be opened, the run's context ended) shows nothing about the fault: the proof is not-observed, so the
// verdicts that need the fault's effect are INCONCLUSIVE, not judged on an unproven outage (audit N11).
func TestDBOutageProofNeedsTheProbeToHaveRun(t *testing.T) {
	fx := newToxiproxyFixture(t)
	noForward := PostgresRoundTrip{Via: "toxiproxy proxy postgres", Timeout: time.Second,
		Endpoint: func(context.Context) (string, func(), error) {
			return "", nil, errors.New("port-forward to ns/toxiproxy-0:5433: error upgrading connection: unable to upgrade")
		}}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name  string
		fault func(Recorder) Fault
		ctx   context.Context
		why   string
	}{
		{"db-down, the port-forward failed", func(r Recorder) Fault { return NewDBDown(r, fx.client, "postgres", noForward) },
			context.Background(), "port-forward to ns/toxiproxy-0:5433"},
		{"db-timeout, the port-forward failed", func(r Recorder) Fault { return NewDBTimeout(r, fx.client, "postgres", time.Second, noForward) },
			context.Background(), "port-forward to ns/toxiproxy-0:5433"},
		{"db-down, the run was cancelled", func(r Recorder) Fault { return NewDBDown(r, fx.client, "postgres", fx.probe) },
			cancelled, "canceled"},
		{"db-timeout, the run was cancelled", func(r Recorder) Fault { return NewDBTimeout(r, fx.client, "postgres", time.Second, fx.probe) },
			cancelled, "canceled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tl := timeline.New(time.Now())
			f := c.fault(Recorder{Timeline: tl, Name: "f"})
			if err := f.Inject(c.ctx); err != nil {
				t.Fatal(err)
			}
			defer f.Revert(context.Background())
			acts := actions(tl)
			if len(acts) != 2 || acts[1].Action != timeline.FaultObserve {
				t.Fatalf("actions = %+v", acts)
			}
			if got := acts[1].Params[timeline.ParamEffect]; got != timeline.EffectNotObserved {
				t.Errorf("effect %s, want %s: %s", got, timeline.EffectNotObserved, acts[1].Detail)
			}
			if !strings.Contains(acts[1].Detail, c.why) || !strings.Contains(acts[1].Detail, "could not run") {
				t.Errorf("detail %q: want the probe's own failure (%q) named as such", acts[1].Detail, c.why)
			}
		})
	}
}

// TestPostgresRoundTripTellsItsOwnFailureFromThePath: what fails before the request reaches the
// proxy is the probe's (ProbeNotRunError); a refusal by the proxy itself, a closed connection and a
// missing reply are the database path's, which a DB fault's proof counts.
func TestPostgresRoundTripTellsItsOwnFailureFromThePath(t *testing.T) {
	closed := func() string { // an address nothing listens on
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}()
	hangsUp := listenAnd(t, func(c net.Conn) { // a disabled proxy, through its forward
		var req [8]byte
		io.ReadFull(c, req[:])
	})
	silent := listenAnd(t, func(c net.Conn) { time.Sleep(2 * time.Second) }) // a timeout toxic
	for _, c := range []struct {
		name   string
		probe  PostgresRoundTrip
		notRun bool
		want   string
	}{
		{"no forward", PostgresRoundTrip{Endpoint: func(context.Context) (string, func(), error) {
			return "", nil, errors.New("port-forward to ns/p:5433: pods \"p\" not found")
		}}, true, "the probe could not run: reach the database: port-forward"},
		{"the forward refused", PostgresRoundTrip{Endpoint: StaticEndpoint(closed), Forwarded: true}, true, "the probe could not run: connect to the forward"},
		{"the proxy refused", PostgresRoundTrip{Endpoint: StaticEndpoint(closed)}, false, "connect: "},
		{"the proxy hung up", PostgresRoundTrip{Endpoint: StaticEndpoint(hangsUp), Forwarded: true}, false, "SSLRequest: EOF"},
		{"no reply", PostgresRoundTrip{Endpoint: StaticEndpoint(silent), Forwarded: true, Timeout: 200 * time.Millisecond}, false, "SSLRequest: no reply within 200ms"},
	} {
		_, err := c.probe.Measure(context.Background())
		if err == nil || probeNotRun(err) != c.notRun || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: err = %v (probe's own failure: %v), want %q, probe's own: %v", c.name, err, probeNotRun(err), c.want, c.notRun)
		}
	}
}

// listenAnd serves each connection with serve and returns the address.
func listenAnd(t *testing.T, serve func(net.Conn)) string {
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
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// TestDBDownProofRetriesAProbeThatDidNotRun: a port-forward that failed once (a busy node) is tried
// again before the outage is called unproven, and the proof says so.
func TestDBDownProofRetriesAProbeThatDidNotRun(t *testing.T) {
	fx := newToxiproxyFixture(t)
	tl := timeline.New(time.Now())
	probe := &notRunOnce{DBProbe: fx.probe}
	f := NewDBDown(Recorder{Timeline: tl, Name: "d"}, fx.client, "postgres", probe)
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer f.Revert(context.Background())
	acts := actions(tl)
	if len(acts) != 2 || acts[1].Params[timeline.ParamEffect] != timeline.EffectConfirmed || !strings.Contains(acts[1].Detail, "second attempt (the first failed: the probe could not run") {
		t.Fatalf("actions = %+v", acts)
	}
}

// notRunOnce is a probe whose first measurement never reaches the proxy.
type notRunOnce struct {
	DBProbe
	calls int
}

func (p *notRunOnce) Measure(ctx context.Context) (time.Duration, error) {
	p.calls++
	if p.calls == 1 {
		return 0, &ProbeNotRunError{errors.New("reach the database: port-forward to ns/p:5433: timed out")}
	}
	return p.DBProbe.Measure(ctx)
}
