package loadgen

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"time"
)

// connHeader is added by connTracer to each response: "reused" or "new"; attemptsHeader carries how
// many connections the request was sent on. vegeta hands the response headers back in its Result,
// which is how the recorder learns about the connection.
const (
	connHeader     = "X-Probegate-Loadgen-Conn"
	attemptsHeader = "X-Probegate-Loadgen-Attempts"
)

// connTracer wraps a transport to note, via httptrace, whether each request reused a connection and
// whether the transport had to resend it: GotConn fires once per attempt, and net/http silently
// retries an idempotent request whose kept-alive connection broke before the response.
type connTracer struct{ next http.RoundTripper }

func (c connTracer) RoundTrip(req *http.Request) (*http.Response, error) {
	var reused bool
	attempts := 0
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused; attempts++ }}
	resp, err := c.next.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
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

// loopbackDial dials only loopback addresses: a last guard behind the URL check, should anything
// (a redirect, a proxy setting) ever point the client elsewhere.
func loopbackDial(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("loadgen dial %s: %w", addr, err)
		}
		if err := checkLoopbackHost(host); err != nil {
			return nil, fmt.Errorf("loadgen dial %s: %w", addr, err)
		}
		return d.DialContext(ctx, network, addr)
	}
}

// newClient builds the HTTP client vegeta attacks with: no proxy (environment proxy settings are
// ignored), redirects not followed, loopback only, keep-alive unless newConnEach.
func newClient(timeout time.Duration, newConnEach bool) *http.Client {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if newConnEach {
		d.KeepAlive = -1
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         loopbackDial(d),
		MaxIdleConnsPerHost: 10000,
		DisableKeepAlives:   newConnEach,
		DisableCompression:  true,
		IdleConnTimeout:     90 * time.Second,
	}
	return &http.Client{
		Transport: connTracer{next: tr},
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
