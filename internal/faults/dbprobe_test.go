package faults

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// slowSetupPostgres answers the SSLRequest after setup and the StartupMessage after rtt, and
// records the user it was sent.
func slowSetupPostgres(t *testing.T, setup, rtt time.Duration, users chan<- string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var req [8]byte
		io.ReadFull(c, req[:])
		time.Sleep(setup)
		c.Write([]byte{'N'})
		var n [4]byte
		if _, err := io.ReadFull(c, n[:]); err != nil || binary.BigEndian.Uint32(n[:]) < 8 {
			return // the probe gave up (timeout, cancel): no StartupMessage, no 4 GiB buffer
		}
		body := make([]byte, binary.BigEndian.Uint32(n[:])-4)
		io.ReadFull(c, body)
		users <- strings.Split(string(body[4:]), "\x00")[1]
		time.Sleep(rtt)
		c.Write([]byte{'E'})
	}()
	return ln.Addr().String()
}

func TestPostgresRoundTripTimesTheStartupExchangeOnly(t *testing.T) {
	users := make(chan string, 1)
	addr := slowSetupPostgres(t, 400*time.Millisecond, 50*time.Millisecond, users)
	d, err := PostgresRoundTrip{Endpoint: StaticEndpoint(addr), Via: "test"}.Measure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d < 50*time.Millisecond || d > 300*time.Millisecond {
		t.Fatalf("measured %v: want the 50ms startup round trip, not the 400ms setup", d)
	}
	if u := <-users; u != "postgres" {
		t.Fatalf("StartupMessage user = %q", u)
	}
}

func TestPostgresRoundTripTimesOut(t *testing.T) {
	users := make(chan string, 1)
	addr := slowSetupPostgres(t, 2*time.Second, 0, users)
	_, err := PostgresRoundTrip{Endpoint: StaticEndpoint(addr), Timeout: 200 * time.Millisecond, Via: "test"}.Measure(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no reply within 200ms") {
		t.Fatalf("err = %v", err)
	}
}

// Cancelling the context (Ctrl-C) ends a measurement stuck behind a slow database at once, not at
// its timeout.
func TestPostgresRoundTripStopsWhenCancelled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var req [8]byte
		io.ReadFull(c, req[:])
		cancel() // the probe now waits for the reply: Ctrl-C
		time.Sleep(10 * time.Second)
	}()
	start := time.Now()
	_, err = PostgresRoundTrip{Endpoint: StaticEndpoint(ln.Addr().String()), Via: "test", Timeout: 10 * time.Second}.Measure(ctx)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("measurement went on %s after its context was cancelled", took)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "the probe could not run: SSLRequest: context canceled") || !probeNotRun(err) {
		t.Fatalf("err = %v", err)
	}
}
