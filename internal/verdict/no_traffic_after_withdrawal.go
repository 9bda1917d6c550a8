package verdict

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "no-traffic-after-withdrawal",
		Title: "A withdrawn pod serves no new requests",
		Doc: "No request on a new connection is served by a withdrawn pod (until it is ready again) after kube-proxy " +
			"stopped routing to it: the moment is measured from the node's rules when the routing watch ran (the lag " +
			"from the endpoint's withdrawal is a figure, between the last read that listed the pod and the first that did not), " +
			"else taken as the withdrawal plus the allowance (the oracle's propagation). A new connection is dated by when it " +
			"was opened (the load generator records its dial), not by its request: one opened while kube-proxy still routed to " +
			"the pod that carries its first request later is leakage, not a failure. The rules read is checked against the " +
			"kernel: a new connection opened after it that the node's conntrack saw DNAT'd to the pod shows the kernel still " +
			"routing, and that withdrawal is judged from the allowance instead (said in the evidence). " +
			"Requests on reused keep-alive connections are counted from the withdrawal plus the allowance, " +
			"separately as leakage (a figure), not as failures, unless count-reused is set: then a connection that carries a " +
			"second request after that moment fails (the pod answered the first without ending keep-alive; an idle " +
			"connection's one first use is leakage, since the pod can only say Connection: close on a response), and a run in which no " +
			"withdrawn pod was serving the load just before its withdrawal is INCONCLUSIVE (nothing showed whether it closes them). " +
			"A gRPC call on a reused connection to a pod out of rotation but still running (readiness failed) fails whatever count-reused says: " +
			"a gRPC server can end a connection at any moment (GOAWAY) and its client balances only on a new one, so the pinned connection is " +
			"traffic the readiness failure never stopped; a terminating pod's calls are the drain rules' to judge.",
		Params: []ParamSpec{
			{Name: "allowance", Kind: KindDuration, Doc: "time for kube-proxy to stop routing; default the oracle's propagation", Tolerance: true},
			{Name: "max", Kind: KindInt, Default: "0", Doc: "requests on new connections tolerated after withdrawal", Tolerance: true},
			{Name: "count-reused", Kind: KindBool, Default: "false", Doc: "also fail on a reused connection the withdrawn pod kept open after answering on it"},
			{Name: "require-withdrawal", Kind: KindBool, Default: "true", Doc: "a run in which no endpoint was withdrawn is not judged (INCONCLUSIVE); false, which made it a PASS, is refused",
				Vacuous: vacuousAt("with no withdrawal it would PASS on nothing")},
		},
		Allowances: []string{oracle.AllowancePropagation},
		Needs:      NeedsEndpoints | NeedsAttribution | NeedsLoad,
		Judge:      judgeNoTrafficAfterWithdrawal,
	})
}

// withdrawnSpan is a pod out of rotation: from its withdrawal to its return (or the end).
type withdrawnSpan struct {
	pod  string
	from timeline.EndpointStep
	to   time.Duration // when the endpoint was ready again; maxDuration when never
	// unrouted is when kube-proxy was seen no longer routing new connections to the pod, routed
	// whether that was measured (else unrouted is the withdrawal plus the allowance).
	unrouted time.Duration
	measured bool
	// since is the last read of the node's rules that still routed to the pod (the removal happened
	// in (since, unrouted]); kernelLast is the opening of the latest new connection the node's
	// kernel DNAT'd to the pod after its withdrawal (conntrack), kernelN how many of those opened
	// after the rules no longer listed it: when any did, the rules read was earlier than what the
	// kernel applied, and the withdrawal is judged from the allowance instead (contradicted).
	since        time.Duration
	rulesAt      time.Duration // the first read without it, kept when contradicted
	kernelLast   time.Duration
	kernelN      int
	contradicted bool
}

// setUnrouted finds, for each span, kube-proxy's removal of the pod from the Service's routing on
// the timeline; without a routing watch, or when the pod stayed routed, the allowance stands in.
// It returns whether the routing watch ran.
func setUnrouted(spans []withdrawnSpan, entries []timeline.Entry, allow time.Duration) bool {
	type removal struct{ at, since time.Duration }
	var removals map[string][]removal
	for _, e := range entries {
		// The host load enters through the ingress node: its kube-proxy is the one that counts.
		if e.Kind != timeline.KindRouting || e.Routing == nil || !e.Routing.AtIngress() {
			continue
		}
		if removals == nil {
			removals = map[string][]removal{}
		}
		if !e.Routing.Routed && e.Pod != "" {
			removals[e.Pod] = append(removals[e.Pod], removal{e.T, e.Routing.Since})
		}
	}
	for i := range spans {
		s := &spans[i]
		s.unrouted = s.from.T + allow
		for _, rm := range removals[s.pod] {
			if rm.at >= s.from.T-timeline.WatchLag && rm.at < s.to {
				s.unrouted, s.measured, s.since = max(rm.at, s.from.T), true, rm.since
				break
			}
		}
	}
	return removals != nil
}

// checkKernel holds each measured removal against the kernel's own routing: the new connections
// the load opened after the pod's withdrawal that the node's conntrack saw DNAT'd (dated by their
// opening, requests with a matched flow). A connection DNAT'd to the pod after the rules no longer
// listed it shows the rules read earlier than what the kernel applied: that withdrawal is judged
// from the allowance instead (contradicted). confirmed counts the dated connections opened after a
// measured removal that the kernel sent elsewhere, checked whether any were seen at all.
func checkKernel(spans []withdrawnSpan, reqs []timeline.Request, allow time.Duration) (confirmed int, checked bool) {
	for i := range spans {
		s := &spans[i]
		if !s.measured {
			continue
		}
		for _, q := range reqs {
			kernelPod, opened, ok := q.KernelRouted()
			if !ok || opened <= s.from.T || opened >= s.to {
				continue
			}
			checked = true
			switch {
			case kernelPod == s.pod:
				s.kernelLast = max(s.kernelLast, opened)
				if opened > s.unrouted {
					s.kernelN++
				}
			case opened > s.unrouted:
				confirmed++
			}
		}
		if s.kernelN > 0 {
			s.rulesAt, s.contradicted, s.measured = s.unrouted, true, false
			s.unrouted = max(s.unrouted, s.from.T+allow)
		}
	}
	return confirmed, checked
}

// lagBounds is when kube-proxy stopped routing to s, after its withdrawal, as far as the rules and
// the kernel show: after the last read that still listed it and the last new connection the kernel
// sent it, no later than the first read without it.
func (s withdrawnSpan) lagBounds() (lo, hi time.Duration) {
	lo = max(s.since, s.from.T)
	if s.kernelLast <= s.unrouted {
		lo = max(lo, s.kernelLast)
	}
	return lo - s.from.T, s.unrouted - s.from.T
}

// heldWindow: a pod that served a request this soon before its withdrawal held a connection the load
// was using (with keep-alive, one it would go on reusing).
const heldWindow = 2 * time.Second

const maxDuration = timeline.Never

func withdrawnSpans(eps endpointHistory) []withdrawnSpan {
	ws := eps.Withdrawals()
	out := make([]withdrawnSpan, 0, len(ws))
	for _, w := range ws {
		out = append(out, withdrawnSpan{pod: w.Pod, from: w.From, to: w.Back})
	}
	return out
}

// pinnedCall reports whether q is a gRPC call on a reused connection to a pod that left rotation
// while still running (readiness failed: not terminating, still in the slice). A terminating pod
// is left to the drain rules: it may keep serving its connections through its withdrawal delay
// before it stops gracefully (GOAWAY), as the terminating-before-exit rule expects.
func pinnedCall(q timeline.Request, s withdrawnSpan) bool {
	return q.GRPC != "" && q.Reused && s.from.Present && !s.from.Terminating
}

func judgeNoTrafficAfterWithdrawal(in Input) Result {
	allow := in.Params.Duration("allowance", in.Oracle.Propagation)
	limit := in.Params.Int("max", 0)
	countReused := in.Params.Bool("count-reused", false)
	r := Result{Status: Pass, Expected: fmt.Sprintf("≤ %d requests on new connections served by a withdrawn pod after kube-proxy stopped routing to it "+
		"(measured from the node's rules; else %s (allowance) after the withdrawal)", limit, dur(allow))}
	if countReused {
		r.Expected += fmt.Sprintf(", nor a second request on one kept-alive connection more than %s after it (the pod ends keep-alive on its next response)", dur(allow))
	}
	eps := buildEndpoints(in.Entries)
	spans := withdrawnSpans(eps)
	watched := setUnrouted(spans, in.Entries, allow)
	reqs := in.sortedRequests()
	confirmed, kernelChecked := checkKernel(spans, reqs, allow)
	if len(spans) == 0 {
		r.nothingToJudge("no endpoint was withdrawn during the run: nothing to judge")
		return r
	}
	end := time.Duration(0)
	if load, ok := in.loadSpan(); ok {
		end = load.End
	}
	byPod := map[string][]withdrawnSpan{}
	var lag, lagLo time.Duration // longest measured withdrawal → kube-proxy stopped routing, and its lower bound
	contradicted, measured := 0, 0
	var kernelLag time.Duration // longest withdrawal → last new connection the kernel sent the pod, where the rules read was contradicted
	for _, s := range spans {
		byPod[s.pod] = append(byPod[s.pod], s)
		to := s.to
		if to == maxDuration {
			to = max(end, s.unrouted, s.from.T+allow)
		}
		why := fmt.Sprintf("withdrawn at %s + %s allowance", dur(s.from.T), dur(allow))
		if s.measured {
			lo, hi := s.lagBounds()
			lag, lagLo = max(lag, hi), max(lagLo, lo)
			measured++
			why = fmt.Sprintf("withdrawn at %s; kube-proxy stopped routing to it by %s", dur(s.from.T), dur(s.unrouted))
		} else if s.contradicted {
			contradicted++
			r.add(atEntry(s.from.T, s.from.Seq, "%s withdrawn at %s: the node's rules no longer listed it at %s (listed at %s), yet its kernel DNAT'd %d new connections to it after that (the last opened at %s, conntrack): "+
				"the rules read is earlier than what the kernel applied, so this withdrawal is judged from the withdrawal + %s allowance", s.pod, dur(s.from.T), dur(s.rulesAt), dur(s.since), s.kernelN, dur(s.kernelLast), dur(allow)))
			kernelLag = max(kernelLag, s.kernelLast-s.from.T)
			why = fmt.Sprintf("withdrawn at %s + %s allowance (the kernel routed to it after the rules read: %s)", dur(s.from.T), dur(allow), dur(s.kernelLast))
		} else if watched && s.to > s.from.T+allow {
			r.add(atEntry(s.from.T, s.from.Seq, "%s withdrawn at %s: kube-proxy was not seen to stop routing to it while it was out (a shared outage falls back to terminating endpoints); the %s allowance applies",
				s.pod, dur(s.from.T), dur(allow)))
		}
		r.window("no new traffic", s.pod, s.unrouted, to, why)
	}
	fresh, reused, kept, preopened, pinned := 0, 0, 0, 0, 0
	// counted is what the rule holds against max: new connections, pinned gRPC calls, and with
	// count-reused the kept-alive connections a pod answered on since its withdrawal.
	counted := func() int {
		if countReused {
			return fresh + pinned + kept
		}
		return fresh + pinned
	}
	datedNew, undatedNew := 0, 0 // new-connection requests judged, dated by their connection's opening or by their start
	// usedAfter counts, per withdrawal and connection, the reused requests after the cutoff.
	type spanConn struct {
		withdrawal int64 // the withdrawal's timeline seq
		conn       string
	}
	usedAfter := map[spanConn]int{}
	busyAtWithdrawal := 0 // requests withdrawn pods served just before their withdrawal
	var worst time.Duration
	var leaks []Evidence         // listed after the violations, which matter more
	inWindow, attributed := 0, 0 // requests sent while some pod was withdrawn, and of those, with a pod
	// bySource is, per load agent (in-cluster load), the latest a withdrawn pod served one of its
	// requests on a new connection after the withdrawal: routing lag as each agent's node saw it.
	bySource := map[string]time.Duration{}
	for _, q := range reqs {
		for _, s := range spans {
			if q.T > min(s.unrouted, s.from.T+allow) && q.T < s.to {
				inWindow++
				if q.Pod != "" {
					attributed++
				}
				break
			}
		}
		for _, s := range byPod[q.Pod] {
			if q.T > s.from.T-heldWindow && q.T <= s.from.T {
				busyAtWithdrawal++
			}
			if q.Source != "" && !q.Reused && q.T > s.from.T && q.T < s.to {
				bySource[q.Source] = max(bySource[q.Source], q.T-s.from.T)
			}
			cutoff := s.unrouted // new connections: routing stopped
			if q.Reused {
				cutoff = s.from.T + allow // kept-alive ones: the app had the allowance to close them
			}
			if q.T <= cutoff || q.T >= s.to {
				continue
			}
			late := q.T - s.from.T
			// A new connection is new from when it was opened: net/http can hand a connection dialed
			// for one request to the next one waiting, so one opened while kube-proxy still routed
			// to the pod can carry its first request after routing stopped.
			opened, dated := q.ConnT()
			if !q.Reused {
				if dated {
					datedNew++
				} else {
					undatedNew++
					opened = q.T
				}
			}
			if !q.Reused && opened <= cutoff {
				preopened++
				leaks = append(leaks, atRequest(q, "served by %s %s after its withdrawal (seq %d) on a connection opened at %s, before routing stopped (%s): its first request, leakage",
					q.Pod, dur(late), s.from.Seq, dur(opened), dur(cutoff)))
				continue
			}
			worst = max(worst, late)
			violation := !q.Reused
			if pinnedCall(q, s) {
				// A gRPC server can end its connection at any moment (GOAWAY), not only on a
				// response, and its client re-resolves only then: calls a live pod out of
				// rotation keeps taking on its pinned connection are traffic its readiness
				// failure never stopped (kube-proxy balances a connection once).
				pinned++
				violation = true
				r.add(atRequest(q, "gRPC call served by %s %s after it left rotation (seq %d, still running) on connection %s, pinned to it: the server did not end the connection (GOAWAY), so its readiness failure never reached this client",
					q.Pod, dur(late), s.from.Seq, q.Conn))
			} else if q.Reused {
				reused++
				key := spanConn{s.from.Seq, q.Conn}
				usedAfter[key]++
				// An idle connection's first use is leakage: the pod can end keep-alive only on a
				// response. A second request on it (or one on an unknown connection) is not.
				if usedAfter[key] > 1 || q.Conn == "" {
					kept++
					ev := atRequest(q, "served by %s %s after its withdrawal (seq %d) on a reused connection it had already answered on since: keep-alive not ended", q.Pod, dur(late), s.from.Seq)
					if countReused {
						violation = true
						r.add(ev)
					} else {
						leaks = append(leaks, ev)
					}
				} else {
					leaks = append(leaks, atRequest(q, "served by %s %s after its withdrawal (seq %d) on a reused connection (its first use since): keep-alive leakage", q.Pod, dur(late), s.from.Seq))
				}
			} else {
				fresh++
				if dated {
					r.add(atRequest(q, "served by %s %s after its withdrawal (seq %d) on a new connection opened at %s, after routing stopped (%s)", q.Pod, dur(late), s.from.Seq, dur(opened), dur(cutoff)))
				} else {
					r.add(atRequest(q, "served by %s %s after its withdrawal (seq %d) on a new connection (not dated: judged by the request's start)", q.Pod, dur(late), s.from.Seq))
				}
			}
			if violation && counted() > limit {
				r.failAt(q.T)
			}
		}
	}
	for _, ev := range leaks {
		r.add(ev)
	}
	r.Observed = fmt.Sprintf("%d requests on new connections and %d on reused connections (keep-alive leakage; %d of them on a connection already answered on since) reached a withdrawn pod after routing stopped; %d withdrawals",
		fresh, reused, kept, len(spans))
	if preopened > 0 {
		r.Observed += fmt.Sprintf("; %d more went over connections opened before routing stopped (their first request: leakage)", preopened)
	}
	if pinned > 0 {
		r.Observed += fmt.Sprintf("; %d gRPC calls a running pod out of rotation took on its pinned connection (counted: it sent no GOAWAY)", pinned)
	}
	if datedNew+undatedNew > 0 {
		r.Observed += fmt.Sprintf("; new connections dated by their opening (%d) or, not dated, by the request's start (%d)", datedNew, undatedNew)
	}
	if watched {
		if measured > 0 {
			r.Observed += fmt.Sprintf("; kube-proxy stopped routing %s–%s after a withdrawal (between the node's last rules read that listed the pod, or the last new connection its kernel sent it, and the first read without it)", dur(lagLo), dur(lag))
			r.figure("routing_lag_max_s", secs(lag))
			r.figure("routing_lag_min_s", secs(lagLo))
		} else if contradicted == 0 {
			r.Observed += "; kube-proxy was not seen to stop routing to a withdrawn pod (node rules): the allowance applies"
		}
		switch {
		case contradicted > 0:
			r.Observed += fmt.Sprintf("; on %d withdrawals the kernel DNAT'd new connections to the pod after the node's rules no longer listed it, up to %s after the withdrawal: those are judged from the %s allowance", contradicted, dur(kernelLag), dur(allow))
			r.figure("routing_lag_kernel_s", secs(kernelLag))
		case kernelChecked:
			r.Observed += fmt.Sprintf("; the kernel agreed: none of the %d new connections opened after the rules dropped a pod went to it (conntrack)", confirmed)
		default:
			r.Observed += "; the rules read was not checked against the kernel: no new connection with a conntrack flow was opened after a withdrawal"
		}
		r.figure("routing_contradicted", float64(contradicted))
	}
	r.figure("preopened_after_withdrawal", float64(preopened))
	if len(bySource) > 0 {
		srcs := slices.Sorted(maps.Keys(bySource))
		parts := make([]string, len(srcs))
		for i, src := range srcs {
			parts[i] = fmt.Sprintf("%s %s", src, dur(bySource[src]))
			r.figure("new_conn_after_withdrawal_s@"+src, secs(bySource[src]))
		}
		r.Observed += "; a withdrawn pod's last request on a new connection after its withdrawal, by load agent (its node's kube-proxy): " + strings.Join(parts, ", ")
	}
	if countReused && busyAtWithdrawal == 0 && r.Status == Pass {
		r.Status = Inconclusive
		r.Unshown = append(r.Unshown, fmt.Sprintf("no withdrawn pod served a request in the %s before its withdrawal, so none held a connection the load was using: "+
			"whether a withdrawn pod closes its kept-alive connections could not be seen (a pod fault with pod: busiest hits the pod the load uses most)", dur(heldWindow)))
	}
	r.measure("requests to a withdrawn pod after routing stopped", "requests", AtMost, float64(counted()), float64(limit))
	r.figure("unattributed_while_withdrawn", float64(inWindow-attributed))
	r.figure("after_withdrawal", float64(fresh))
	r.figure("keepalive_leak", float64(reused))
	r.figure("keepalive_not_ended", float64(kept))
	r.figure("grpc_pinned_after_withdrawal", float64(pinned))
	r.figure("withdrawals", float64(len(spans)))
	r.figure("latest_after_withdrawal_s", secs(worst))
	return r
}
