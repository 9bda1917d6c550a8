package loadgen

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"time"
)

// connHeader is added by connTracer to each response: "reused" or "new". vegeta hands the response
// headers back in its Result, which is how the recorder learns whether a connection was kept alive.
const connHeader = "X-Probegate-Loadgen-Conn"

// connTracer wraps a transport to note, via httptrace, whether each request reused a connection.
type connTracer struct{ next http.RoundTripper }

func (c connTracer) RoundTrip(req *http.Request) (*http.Response, error) {
	var reused bool
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
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
