package reports

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// Connection is one long-lived connection the load held (a gRPC client's: every call multiplexed
// over it, balanced by kube-proxy once, when it opened) with the pods its calls were attributed to.
type Connection struct {
	// Client is which of the load's clients opened it (from 0); Local its local address, the key
	// the node's conntrack table ties to a pod.
	Client int    `json:"client"`
	Local  string `json:"local"`
	Remote string `json:"remote,omitempty"`
	// OpenedAt is when its dial began; ClosedAt when it ended while the load ran (the server's
	// GOAWAY, or cut), zero when it was open to the end.
	OpenedAt time.Time `json:"openedAt"`
	ClosedAt time.Time `json:"closedAt,omitzero"`
	// Calls counts the calls made on it; FirstCall and LastCall are the first and last start.
	Calls     uint64    `json:"calls"`
	FirstCall time.Time `json:"firstCall,omitzero"`
	LastCall  time.Time `json:"lastCall,omitzero"`
	// Pods counts its calls by the pod each was attributed to (response metadata or conntrack); Pod
	// is the one pod they all went to, "" when none was attributed or they name several.
	Pods map[string]uint64 `json:"pods,omitempty"`
	Pod  string            `json:"pod,omitempty"`
}

// PinConnections fills each connection's Pods and Pod from the attributed requests made on it: a
// request's Conn is the connection's local address and its ConnAt the connection's opening (a
// later connection may reuse the port). conns is changed in place and returned.
func PinConnections(conns []Connection, reqs []timeline.Request) []Connection {
	type key struct {
		local  string
		opened int64
	}
	index := map[key]int{}
	byLocal := map[string][]int{}
	for i, c := range conns {
		conns[i].Pods, conns[i].Pod = nil, ""
		index[key{c.Local, c.OpenedAt.UnixNano()}] = i
		byLocal[c.Local] = append(byLocal[c.Local], i)
	}
	for _, q := range reqs {
		if q.Pod == "" || q.Conn == "" {
			continue
		}
		i, ok := index[key{q.Conn, q.ConnAt.UnixNano()}]
		if !ok && q.ConnAt.IsZero() && len(byLocal[q.Conn]) == 1 {
			i, ok = byLocal[q.Conn][0], true
		}
		if !ok {
			continue
		}
		if conns[i].Pods == nil {
			conns[i].Pods = map[string]uint64{}
		}
		conns[i].Pods[q.Pod]++
	}
	for i := range conns {
		if len(conns[i].Pods) == 1 {
			for p := range conns[i].Pods {
				conns[i].Pod = p
			}
		}
	}
	return conns
}

// connectionsLine is the terminal's line on the load's connections: "gRPC: 3 connections; pinned:
// conn1→web-0 (412 calls), …", "" when the load held none.
func connectionsLine(conns []Connection) string {
	if len(conns) == 0 {
		return ""
	}
	parts := make([]string, 0, len(conns))
	closed := 0
	for i, c := range conns {
		to := c.Pod
		switch {
		case len(c.Pods) == 0:
			to = "?"
		case to == "":
			to = strings.Join(slices.Sorted(maps.Keys(c.Pods)), "+")
		}
		p := fmt.Sprintf("conn%d→%s (%d call%s", i+1, to, c.Calls, plural(int(c.Calls)))
		if !c.ClosedAt.IsZero() {
			p += ", closed"
			closed++
		}
		parts = append(parts, p+")")
	}
	head := fmt.Sprintf("gRPC: %d connection%s", len(conns), plural(len(conns)))
	if closed > 0 {
		head += fmt.Sprintf(", %d closed during the load", closed)
	}
	return head + "; pinned: " + strings.Join(parts, ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
