// Package routing records when kube-proxy actually stops (and starts) routing new connections to
// each backend of the target Service, so "no new requests after withdrawal" is judged from the
// measured moment routing changed instead of an assumed propagation allowance. A Watcher polls the
// node's nat table (`iptables-save -t nat`, what kube-proxy's iptables mode programs) and keeps the
// Service's backend jumps, whose comments read "ns/svc:port -> 10.244.0.7:8080"; Changes turns the
// snapshots into per-address transitions.
package routing

import (
	"bufio"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Snapshot is the set of backend addresses kube-proxy routed the Service's new connections to, as
// read at At (taken after the table was read: the set held at some instant no later than At).
type Snapshot struct {
	At       time.Time
	Backends []netip.Addr
}

// stampPrefix starts the line the node-side loop prints after each read of the table.
const stampPrefix = "T "

// Parse reads the watcher's output: after each read of the table, the backend jump rules of the
// Service (already filtered by its comment prefix in the node) and then a line "T <unix seconds>".
// service is "namespace/name"; rules of other Services sharing the prefix are ignored. A
// malformed stamp is an error; rule lines it cannot read are counted in bad.
func Parse(out, service string) (snaps []Snapshot, bad int, err error) {
	var cur []netip.Addr
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, stampPrefix); ok {
			at, err := parseStamp(rest)
			if err != nil {
				return snaps, bad, fmt.Errorf("routing snapshot stamp %q: %w", line, err)
			}
			slices.SortFunc(cur, func(a, b netip.Addr) int { return a.Compare(b) })
			snaps = append(snaps, Snapshot{At: at, Backends: slices.Compact(cur)})
			cur = nil
			continue
		}
		addr, ok := backendOf(line, service)
		if !ok {
			bad++
			continue
		}
		if addr.IsValid() {
			cur = append(cur, addr)
		}
	}
	if err := sc.Err(); err != nil {
		return snaps, bad, fmt.Errorf("read routing snapshots: %w", err)
	}
	return snaps, bad, nil
}

// backendOf reads the backend address of one jump rule:
//
//	-A KUBE-SVC-ABC -m comment --comment "ns/target:http -> 10.244.0.7:8080" -m statistic ... -j KUBE-SEP-XYZ
//
// ok is false for a line that is not such a rule; the address is invalid (and ok true) for a rule
// of another Service that shares the comment prefix.
func backendOf(line, service string) (netip.Addr, bool) {
	_, rest, found := strings.Cut(line, `--comment "`)
	if !found {
		return netip.Addr{}, false
	}
	comment, _, found := strings.Cut(rest, `"`)
	if !found {
		return netip.Addr{}, false
	}
	name, backend, found := strings.Cut(comment, " -> ")
	if !found {
		return netip.Addr{}, false
	}
	// "ns/svc:port" for a named port, "ns/svc" for an unnamed one.
	if svc, _, _ := strings.Cut(name, ":"); svc != service {
		return netip.Addr{}, true
	}
	ap, err := netip.ParseAddrPort(strings.TrimSpace(backend))
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr(), true
}

func parseStamp(s string) (time.Time, error) {
	sec, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	whole, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	var nanos int64
	if frac != "" {
		frac = (frac + "000000000")[:9]
		if nanos, err = strconv.ParseInt(frac, 10, 64); err != nil {
			return time.Time{}, err
		}
	}
	return time.Unix(whole, nanos), nil
}

// Change is one backend entering or leaving the Service's routing: At is the first snapshot that
// showed the new state and Since the last one that showed the old, so the change happened in
// (Since, At].
type Change struct {
	Addr   netip.Addr
	Routed bool
	Since  time.Time
	At     time.Time
}

// Changes lists every transition between consecutive snapshots, in time order. The first snapshot
// is the starting state: its backends appear as routed with a zero Since.
func Changes(snaps []Snapshot) []Change {
	var out []Change
	prev := map[netip.Addr]bool{}
	var prevAt time.Time
	for i, s := range snaps {
		now := map[netip.Addr]bool{}
		for _, a := range s.Backends {
			now[a] = true
			if !prev[a] {
				c := Change{Addr: a, Routed: true, At: s.At}
				if i > 0 {
					c.Since = prevAt
				}
				out = append(out, c)
			}
		}
		var gone []netip.Addr
		for a := range prev {
			if !now[a] {
				gone = append(gone, a)
			}
		}
		slices.SortFunc(gone, func(a, b netip.Addr) int { return a.Compare(b) })
		for _, a := range gone {
			out = append(out, Change{Addr: a, Routed: false, Since: prevAt, At: s.At})
		}
		prev, prevAt = now, s.At
	}
	return out
}
