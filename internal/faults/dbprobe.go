package faults

import (
	"context"
	"encoding/binary"
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

// Endpoint returns an address to connect to and a release func for whatever it opened (a
// port-forward).
type Endpoint func(ctx context.Context) (addr string, release func(), err error)

// StaticEndpoint is an Endpoint that is always addr.
func StaticEndpoint(addr string) Endpoint {
	return func(context.Context) (string, func(), error) { return addr, func() {}, nil }
}

// PostgresRoundTrip is a DBProbe that speaks just enough of the PostgreSQL protocol to need no
// credentials: it connects and sends an SSLRequest, which the server answers with one byte ('S' or
// 'N'). The time from connect to that byte is one real round trip to the database.
type PostgresRoundTrip struct {
	Endpoint Endpoint
	Timeout  time.Duration // per measurement; 5s when 0
	Via      string        // described in observe actions, e.g. "proxy postgres"
}

func (p PostgresRoundTrip) String() string { return "postgres round trip via " + p.Via }

// sslRequestCode is the PostgreSQL SSLRequest magic (1234 << 16 | 5679).
const sslRequestCode = 80877103

// Measure implements DBProbe. The duration is measured from the start of the TCP connect to the
// server's reply (or to the failure).
func (p PostgresRoundTrip) Measure(ctx context.Context) (time.Duration, error) {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	addr, release, err := p.Endpoint(ctx)
	if err != nil {
		return 0, fmt.Errorf("reach the database: %w", err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return time.Since(start), fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	var req [8]byte
	binary.BigEndian.PutUint32(req[0:4], 8)
	binary.BigEndian.PutUint32(req[4:8], sslRequestCode)
	if _, err := conn.Write(req[:]); err != nil {
		return time.Since(start), fmt.Errorf("send SSLRequest: %w", err)
	}
	var reply [1]byte
	if _, err := io.ReadFull(conn, reply[:]); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return time.Since(start), fmt.Errorf("no reply within %s", timeout)
		}
		return time.Since(start), fmt.Errorf("read reply: %w", err)
	}
	d0 := time.Since(start)
	if reply[0] != 'S' && reply[0] != 'N' {
		return d0, fmt.Errorf("unexpected reply %q: not a PostgreSQL server", reply[0])
	}
	return d0, nil
}
