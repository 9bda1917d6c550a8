package verdict

import (
	"fmt"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "no-traffic-after-withdrawal",
		Title: "A withdrawn pod serves no new requests",
		Doc: "No request is served by a pod later than its endpoint's withdrawal plus the allowance (kube-proxy " +
			"propagation), until it is ready again. Requests on reused keep-alive connections are counted separately " +
			"as leakage (a figure), not as failures, unless count-reused is set.",
		Params: []ParamSpec{
			{Name: "allowance", Kind: KindDuration, Doc: "time for kube-proxy to stop routing; default the oracle's propagation", Tolerance: true},
			{Name: "max", Kind: KindInt, Default: "0", Doc: "requests on new connections tolerated after withdrawal", Tolerance: true},
			{Name: "count-reused", Kind: KindBool, Default: "false", Doc: "also fail on requests over reused connections"},
			{Name: "require-withdrawal", Kind: KindBool, Default: "true", Doc: "fail when no endpoint was withdrawn at all"},
		},
		Needs: NeedsEndpoints | NeedsAttribution,
		Judge: judgeNoTrafficAfterWithdrawal,
	})
}

// withdrawnSpan is a pod out of rotation: from its withdrawal to its return (or the end).
type withdrawnSpan struct {
	pod  string
	from timeline.EndpointStep
	to   time.Duration // when the endpoint was ready again; maxDuration when never
}

const maxDuration = time.Duration(1<<63 - 1)

func withdrawnSpans(eps endpointHistory) []withdrawnSpan {
	var out []withdrawnSpan
	for _, pod := range eps.Pods {
		t := time.Duration(-1 << 62)
		for {
			w, ok := eps.withdrawal(pod, t)
			if !ok {
				break
			}
			span := withdrawnSpan{pod: pod, from: w, to: maxDuration}
			if back, ok := eps.readyAgain(pod, w.T+1); ok {
				span.to = back.T
			}
			out = append(out, span)
			if span.to == maxDuration {
				break
			}
			t = span.to + 1
		}
	}
	return out
}

func judgeNoTrafficAfterWithdrawal(in Input) Result {
	allow := in.Params.Duration("allowance", in.Oracle.Propagation)
	limit := in.Params.Int("max", 0)
	countReused := in.Params.Bool("count-reused", false)
	r := Result{Status: Pass, Expected: fmt.Sprintf("≤ %d requests served by a pod more than %s (allowance) after its endpoint was withdrawn", limit, dur(allow))}
	eps := buildEndpoints(in.Entries)
	spans := withdrawnSpans(eps)
	if len(spans) == 0 {
		if in.Params.Bool("require-withdrawal", true) {
			r.nothingToJudge("no endpoint was withdrawn during the run: nothing to judge")
		} else {
			r.Observed = "no endpoint was withdrawn during the run: nothing to judge"
		}
		return r
	}
	end := time.Duration(0)
	if load, ok := in.loadSpan(); ok {
		end = load.End
	}
	byPod := map[string][]withdrawnSpan{}
	for _, s := range spans {
		byPod[s.pod] = append(byPod[s.pod], s)
		to := s.to
		if to == maxDuration {
			to = max(end, s.from.T+allow)
		}
		r.window("no new traffic", s.pod, s.from.T+allow, to, fmt.Sprintf("withdrawn at %s + %s allowance", dur(s.from.T), dur(allow)))
	}
	fresh, reused := 0, 0
	var worst time.Duration
	var leaks []Evidence         // listed after the violations, which matter more
	inWindow, attributed := 0, 0 // requests sent while some pod was withdrawn, and of those, with a pod
	for _, q := range in.sortedRequests() {
		for _, s := range spans {
			if q.T > s.from.T+allow && q.T < s.to {
				inWindow++
				if q.Pod != "" {
					attributed++
				}
				break
			}
		}
		for _, s := range byPod[q.Pod] {
			if q.T <= s.from.T+allow || q.T >= s.to {
				continue
			}
			late := q.T - s.from.T
			worst = max(worst, late)
			if q.Reused {
				reused++
				leaks = append(leaks, atRequest(q, "served by %s %s after its withdrawal (seq %d) on a reused connection: keep-alive leakage", q.Pod, dur(late), s.from.Seq))
			} else {
				fresh++
				r.add(atRequest(q, "served by %s %s after its withdrawal (seq %d) on a new connection", q.Pod, dur(late), s.from.Seq))
			}
			counted := fresh
			if countReused {
				counted += reused
			}
			if counted > limit && (countReused || !q.Reused) {
				r.failAt(q.T)
			}
		}
	}
	for _, ev := range leaks {
		r.add(ev)
	}
	r.Observed = fmt.Sprintf("%d requests on new connections and %d on reused connections (keep-alive leakage) reached a withdrawn pod after the allowance; %d withdrawals",
		fresh, reused, len(spans))
	if inWindow > 0 && attributed == 0 && r.Status == Pass {
		r.Status = Inconclusive
		r.Unshown = append(r.Unshown, fmt.Sprintf("none of the %d requests sent while a pod was withdrawn could be attributed to a pod: the rule could not see where they went", inWindow))
	}
	r.figure("unattributed_while_withdrawn", float64(inWindow-attributed))
	r.figure("after_withdrawal", float64(fresh))
	r.figure("keepalive_leak", float64(reused))
	r.figure("withdrawals", float64(len(spans)))
	r.figure("latest_after_withdrawal_s", secs(worst))
	return r
}
