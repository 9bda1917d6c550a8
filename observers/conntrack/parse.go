// Package conntrack ties each load request to the pod that served it without the app's help. The
// load goes straight to the kind node's NodePort (nodeIP:nodePort: Docker's userland proxy in front
// of 127.0.0.1 would replace the client's address and port with its own), kube-proxy DNATs each
// connection to one pod, and the node's conntrack table records both ends: the client's address
// and port as the flow's original source, the pod's address as its reply source. A Watcher streams
// `conntrack -E` in the node for the NodePort; Attribute joins each request's connection (its local
// address, recorded by loadgen) to its flow and the flow's pod address to the pod that had it then
// (from the EndpointSlice entries on the timeline, so a pod IP reused after a restart names the
// right pod).
package conntrack

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Flow is one connection conntrack recorded.
type Flow struct {
	// At is when the event was reported (`-o timestamp`), zero for a line of a table listing.
	At time.Time
	// Client is the original source (the load generator's address and port), Service the original
	// destination (node IP and NodePort) and Backend the reply source: the pod it was DNAT'd to.
	Client, Service, Backend netip.AddrPort
}

// ParseLine reads one line of `conntrack -E -o timestamp` or `conntrack -L` output. ok is false
// for lines that describe no TCP flow (notices, the closing summary, blank lines).
//
//	[1796122714.073845]	    [NEW] tcp      6 120 SYN_SENT src=172.29.0.1 dst=172.29.0.2 sport=48778 dport=30080 [UNREPLIED] src=10.244.0.6 dst=10.244.0.1 sport=8080 dport=52196
//	tcp      6 117 TIME_WAIT src=172.29.0.1 dst=172.29.0.2 sport=41121 dport=30080 src=10.244.0.6 dst=10.244.0.1 sport=8080 dport=6349 [ASSURED] mark=0 use=1
func ParseLine(line string) (f Flow, ok bool, err error) {
	fields := strings.Fields(line)
	i := 0
	if i < len(fields) && strings.HasPrefix(fields[i], "[") && strings.HasSuffix(fields[i], "]") && !isEvent(fields[i]) {
		at, err := parseStamp(strings.Trim(fields[i], "[]"))
		if err != nil {
			return Flow{}, false, fmt.Errorf("conntrack line %q: %w", line, err)
		}
		f.At = at
		i++
	}
	if i < len(fields) && isEvent(fields[i]) {
		i++
	}
	if i >= len(fields) || fields[i] != "tcp" {
		return Flow{}, false, nil
	}
	var src, dst [2]netip.Addr
	var sport, dport [2]uint16
	var nsrc, ndst, nsport, ndport int
	for _, fld := range fields[i+1:] {
		k, v, found := strings.Cut(fld, "=")
		if !found {
			continue
		}
		switch k {
		case "src", "dst":
			a, err := netip.ParseAddr(v)
			if err != nil {
				return Flow{}, false, fmt.Errorf("conntrack line %q: %s: %w", line, k, err)
			}
			if k == "src" && nsrc < 2 {
				src[nsrc], nsrc = a, nsrc+1
			} else if k == "dst" && ndst < 2 {
				dst[ndst], ndst = a, ndst+1
			}
		case "sport", "dport":
			p, err := strconv.ParseUint(v, 10, 16)
			if err != nil {
				return Flow{}, false, fmt.Errorf("conntrack line %q: %s: %w", line, k, err)
			}
			if k == "sport" && nsport < 2 {
				sport[nsport], nsport = uint16(p), nsport+1
			} else if k == "dport" && ndport < 2 {
				dport[ndport], ndport = uint16(p), ndport+1
			}
		}
	}
	if nsrc < 2 || ndst < 2 || nsport < 2 || ndport < 2 {
		return Flow{}, false, fmt.Errorf("conntrack line %q: want both tuples (src, dst, sport, dport twice)", line)
	}
	f.Client = netip.AddrPortFrom(src[0], sport[0])
	f.Service = netip.AddrPortFrom(dst[0], dport[0])
	f.Backend = netip.AddrPortFrom(src[1], sport[1])
	return f, true, nil
}

// isEvent reports whether s is an event tag: [NEW], [UPDATE], [DESTROY].
func isEvent(s string) bool {
	switch s {
	case "[NEW]", "[UPDATE]", "[DESTROY]":
		return true
	}
	return false
}

// parseStamp reads conntrack's "seconds.microseconds" timestamp.
func parseStamp(s string) (time.Time, error) {
	sec, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q: %w", s, err)
	}
	var us int64
	if frac != "" {
		frac = (frac + "000000")[:6]
		if us, err = strconv.ParseInt(frac, 10, 64); err != nil {
			return time.Time{}, fmt.Errorf("timestamp %q: %w", s, err)
		}
	}
	return time.Unix(n, us*1000), nil
}

// ParseOutput reads every flow of conntrack's output; unparseable flow lines are counted in bad
// (the first one's error returned), other lines skipped.
func ParseOutput(out string) (flows []Flow, bad int, first error) {
	for _, line := range strings.Split(out, "\n") {
		f, ok, err := ParseLine(line)
		if err != nil {
			bad++
			if first == nil {
				first = err
			}
			continue
		}
		if ok {
			flows = append(flows, f)
		}
	}
	return flows, bad, first
}
