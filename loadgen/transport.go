package loadgen

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// connHeader is added by connTracer to each response: "reused" or "new"; attemptsHeader carries how
// many connections the request was sent on. vegeta hands the response headers back in its Result,
// which is how the recorder learns about the connection.
const (
	connHeader     = "X-Probegate-Loadgen-Conn"
	attemptsHeader = "X-Probegate-Loadgen-Attempts"
	// vegetaSeqHeader is the request header vegeta numbers each request with (Result.Seq).
	vegetaSeqHeader = "X-Vegeta-Seq"
)

// connTable holds each request's connection (its local address and when it was opened) by
// vegeta's sequence number (the X-Vegeta-Seq request header) until the recorder takes it: vegeta
// keeps no response and only the error's text of a failed request, so the table is how a failed
// request's connection is known.
type connTable struct{ m sync.Map }

// connInfo is the connection a request's last attempt went over.
type connInfo struct {
	local  string
	opened time.Time // when its dial began; zero when unknown
}

func (t *connTable) put(seq string, c connInfo) {
	if t != nil && seq != "" && c.local != "" {
		t.m.Store(seq, c)
	}
}

// take returns and forgets the connection recorded for seq (zero when none).
func (t *connTable) take(seq uint64) connInfo {
	if t == nil {
		return connInfo{}
	}
	v, ok := t.m.LoadAndDelete(strconv.FormatUint(seq, 10))
	if !ok {
		return connInfo{}
	}
	return v.(connInfo)
}

// timedConn is a connection that knows when it was opened — when its dial began, the instant its
// first SYN left, which is when the node's DNAT chose its pod: the dialer wraps every connection it
// makes, so a request's trace can date its connection. A connection dialed for one request may
// carry another (net/http hands a dial that finished after its request was served to the next
// request that waits), so "a new connection" is dated by this, not by the request's start.
type timedConn struct {
	net.Conn
	opened time.Time
}

// openedAt is when c was opened, zero when c was not made by the loadgen's dialer.
func openedAt(c net.Conn) time.Time {
	if tc, ok := c.(*timedConn); ok {
		return tc.opened
	}
	return time.Time{}
}

// connTracer wraps a transport to note, via httptrace, whether each request reused a connection,
// whether the transport had to resend it (GotConn fires once per attempt, and net/http silently
// retries an idempotent request whose kept-alive connection broke before the response), and the
// last attempt's local address, by which the node's conntrack table names the pod that served it.
type connTracer struct {
	next  http.RoundTripper
	conns *connTable
}

func (c connTracer) RoundTrip(req *http.Request) (*http.Response, error) {
	var (
		mu       sync.Mutex
		reused   bool
		attempts int
		conn     connInfo
	)
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		mu.Lock()
		defer mu.Unlock()
		reused = info.Reused
		attempts++
		conn = connInfo{}
		if info.Conn != nil && info.Conn.LocalAddr() != nil {
			conn = connInfo{local: info.Conn.LocalAddr().String(), opened: openedAt(info.Conn)}
		}
	}}
	resp, err := c.next.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	mu.Lock()
	defer mu.Unlock()
	c.conns.put(req.Header.Get(vegetaSeqHeader), conn)
	if resp != nil {
		if resp.Header == nil {
			resp.Header = http.Header{}
		}
		if reused {
			resp.Header.Set(connHeader, "reused")
		} else {
			resp.Header.Set(connHeader, "new")
		}
		resp.Header.Set(attemptsHeader, strconv.Itoa(attempts))
	}
	return resp, err
}

// loopbackDial dials only loopback addresses (and allow, the kind node's own address, when set): a
// last guard behind the URL check, should anything (a redirect, a proxy setting) ever point the
// client elsewhere.
func loopbackDial(d *net.Dialer, allow string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("loadgen dial %s: %w", addr, err)
		}
		if err := checkHost(host, allow); err != nil {
			return nil, fmt.Errorf("loadgen dial %s: %w", addr, err)
		}
		began := time.Now()
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &timedConn{Conn: c, opened: began}, nil
	}
}

// clientsRoundTripper hands requests to its transports in turn: each transport is one client with
// its own connection pool.
type clientsRoundTripper struct {
	clients []http.RoundTripper
	next    atomic.Uint64
}

func (c *clientsRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	i := (c.next.Add(1) - 1) % uint64(len(c.clients))
	return c.clients[i].RoundTrip(req)
}

// newClient builds the HTTP client vegeta attacks with: no proxy (environment proxy settings are
// ignored), redirects not followed, loopback (or allow) only, keep-alive unless newConnEach, the
// requests shared in turn by clients independent connection pools (one when clients < 2).
func newClient(timeout time.Duration, newConnEach bool, allow string, clients int, conns *connTable) *http.Client {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if newConnEach {
		d.KeepAlive = -1
	}
	transport := func() *http.Transport {
		return &http.Transport{
			Proxy:               nil,
			DialContext:         loopbackDial(d, allow),
			MaxIdleConnsPerHost: 10000,
			DisableKeepAlives:   newConnEach,
			DisableCompression:  true,
			IdleConnTimeout:     90 * time.Second,
		}
	}
	var tr http.RoundTripper = transport()
	if clients > 1 {
		rr := &clientsRoundTripper{}
		for range clients {
			rr.clients = append(rr.clients, transport())
		}
		tr = rr
	}
	return &http.Client{
		Transport: connTracer{next: tr, conns: conns},
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
