package faults

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// DBProbe measures one round trip to the database through the fault's path: the proof that a DB
// fault took effect (and, after revert, that it is gone).
type DBProbe interface {
	Measure(ctx context.Context) (time.Duration, error)
	String() string
}

// ProbeNotRunError is a measurement that never reached the fault's path: the way to the proxy could
// not be opened (the port-forward), a connection to a local forward was refused, or the caller's
// context ended first. It shows nothing about the fault either way: a DB fault's proof then stays
// unproven instead of counting the failure as the outage.
type ProbeNotRunError struct{ Err error }

func (e *ProbeNotRunError) Error() string { return "the probe could not run: " + e.Err.Error() }
func (e *ProbeNotRunError) Unwrap() error { return e.Err }

// probeNotRun reports whether err, from DBProbe.Measure, is the probe's own failure
// (ProbeNotRunError) rather than the database path's.
func probeNotRun(err error) bool {
	var nr *ProbeNotRunError
	return errors.As(err, &nr)
}

// Endpoint returns an address to connect to and a release func for whatever it opened (a
// port-forward).
type Endpoint func(ctx context.Context) (addr string, release func(), err error)

// StaticEndpoint is an Endpoint that is always addr.
func StaticEndpoint(addr string) Endpoint {
	return func(context.Context) (string, func(), error) { return addr, func() {}, nil }
}

// PostgresRoundTrip is a DBProbe that speaks just enough of the PostgreSQL protocol to need no
// credentials. It connects and sends an SSLRequest, which the server answers with one byte ('S' or
// 'N'); that exchange also opens whatever lies between (a port-forward stream, the proxy's upstream
// connection). It then sends a StartupMessage and times the server's first reply byte
// (authentication request or error): one clean round trip to the database over an established path.
type PostgresRoundTrip struct {
	Endpoint Endpoint
	Timeout  time.Duration // per measurement; 5s when 0
	Via      string        // described in observe actions, e.g. "proxy postgres"
	User     string        // user named in the StartupMessage; "postgres" when empty
	// Forwarded says Endpoint is a local forward to the proxy (a port-forward): a connect it refuses
	// is the forward's failure, not the proxy's (ProbeNotRunError). Otherwise Endpoint is the proxy
	// itself, and a refused connect is the proxy refusing (a disabled proxy).
	Forwarded bool
}

func (p PostgresRoundTrip) String() string { return "postgres round trip via " + p.Via }

// sslRequestCode is the PostgreSQL SSLRequest magic (1234 << 16 | 5679); protocol3 is version 3.0.
const (
	sslRequestCode = 80877103
	protocol3      = 196608
)

// Measure implements DBProbe. On success the duration is the StartupMessage round trip; on failure
// it is the time from the connect to the failure. It returns as soon as ctx ends. A failure before
// the request reached the proxy (no endpoint, a refused forward, ctx ended) is a ProbeNotRunError;
// any other error is the database path's: no reply within the timeout, a closed or refused
// connection.
func (p PostgresRoundTrip) Measure(ctx context.Context) (time.Duration, error) {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	if ctx.Err() != nil {
		return 0, &ProbeNotRunError{fmt.Errorf("before it started: %w", context.Cause(ctx))}
	}
	addr, release, err := p.Endpoint(ctx)
	if err != nil {
		return 0, &ProbeNotRunError{fmt.Errorf("reach the database: %w", err)}
	}
	defer release()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	switch {
	case err != nil && parent.Err() != nil:
		return time.Since(start), &ProbeNotRunError{fmt.Errorf("connect: %w", context.Cause(parent))}
	case err != nil && p.Forwarded:
		return time.Since(start), &ProbeNotRunError{fmt.Errorf("connect to the forward %s: %w", addr, err)}
	case err != nil:
		return time.Since(start), fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	// The deadline bounds the reads; the caller ending ctx (Ctrl-C) cuts them short too.
	defer context.AfterFunc(parent, func() { conn.Close() })()
	fail := func(what string, err error) (time.Duration, error) {
		if parent.Err() != nil { // cut short by the caller, not by the path
			return time.Since(start), &ProbeNotRunError{fmt.Errorf("%s: %w", what, context.Cause(parent))}
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return time.Since(start), fmt.Errorf("%s: no reply within %s", what, timeout)
		}
		return time.Since(start), fmt.Errorf("%s: %w", what, err)
	}
	var req [8]byte
	binary.BigEndian.PutUint32(req[0:4], 8)
	binary.BigEndian.PutUint32(req[4:8], sslRequestCode)
	if _, err := conn.Write(req[:]); err != nil {
		return fail("send SSLRequest", err)
	}
	var reply [1]byte
	if _, err := io.ReadFull(conn, reply[:]); err != nil {
		return fail("SSLRequest", err)
	}
	if reply[0] == 'S' {
		return time.Since(start), nil // the server wants TLS: the first exchange is all we get
	}
	if reply[0] != 'N' {
		return time.Since(start), fmt.Errorf("unexpected reply %q: not a PostgreSQL server", reply[0])
	}
	user := p.User
	if user == "" {
		user = "postgres"
	}
	body := []byte("user\x00" + user + "\x00database\x00postgres\x00\x00")
	msg := binary.BigEndian.AppendUint32(nil, uint32(8+len(body)))
	msg = binary.BigEndian.AppendUint32(msg, protocol3)
	msg = append(msg, body...)
	sent := time.Now()
	if _, err := conn.Write(msg); err != nil {
		return fail("send StartupMessage", err)
	}
	if _, err := io.ReadFull(conn, reply[:]); err != nil {
		return fail("StartupMessage", err)
	}
	rtt := time.Since(sent)
	if reply[0] != 'R' && reply[0] != 'E' {
		return rtt, fmt.Errorf("unexpected reply %q to StartupMessage", reply[0])
	}
	conn.Write([]byte{'X', 0, 0, 0, 4}) // Terminate
	return rtt, nil
}
