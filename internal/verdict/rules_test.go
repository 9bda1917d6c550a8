package verdict_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

const s = time.Second

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// base is three pods bootstrapped and ready at 0–1s, with 30 req/s of load from 1s to 40s.
func base() *vt.Builder {
	b := vt.New()
	for _, p := range []string{"a", "b", "c"} {
		b.Created(0, p).ContainerReady(ms(800), p)
	}
	return b.Ready(s, "a", "b", "c").Traffic(s, 40*s, 30)
}

type ruleCase struct {
	name     string
	rule     string
	params   map[string]string
	run      *vt.Builder
	want     verdict.Status
	observed string        // substring of Observed
	at       time.Duration // when want is Fail: the expected At
	evidence string        // substring of some evidence note
	figures  map[string]float64
}

func TestRules(t *testing.T) {
	cases := []ruleCase{
		// no-liveness-restarts
		{name: "no restarts", rule: "no-liveness-restarts", run: base(), want: verdict.Pass, observed: "0 liveness restarts"},
		{name: "other cause only", rule: "no-liveness-restarts", run: base().Restart(20*s, "a", timeline.CauseOOM), want: verdict.Pass,
			figures: map[string]float64{"other_restarts": 1}},
		{name: "liveness restart", rule: "no-liveness-restarts", run: base().Restart(20*s, "b", timeline.CauseLiveness), want: verdict.Fail,
			at: 20 * s, figures: map[string]float64{"liveness_restarts": 1}},

		// liveness-restart-in-window: window [2s, 5s] + 10s grace + 2s restart = by 17s
		{name: "restart in window", rule: "liveness-restart-in-window",
			run:  base().Inject(10*s, "stall", "a").NotReady(13*s, "a").Restart(22*s, "a", timeline.CauseLiveness).Ready(25*s, "a"),
			want: verdict.Pass, observed: "a restarted 12s after the fault"},
		{name: "restart late", rule: "liveness-restart-in-window",
			run:  base().Inject(10*s, "stall", "a").Restart(28*s, "a", timeline.CauseLiveness),
			want: verdict.Fail, at: 28 * s},
		{name: "restart early", rule: "liveness-restart-in-window",
			run:  base().Inject(10*s, "stall", "a").Restart(11*s, "a", timeline.CauseLiveness),
			want: verdict.Fail, at: 11 * s},
		{name: "never restarted", rule: "liveness-restart-in-window",
			run:  base().Inject(10*s, "stall", "a"),
			want: verdict.Fail, at: 27 * s, observed: "never restarted"},
		{name: "bystander restarted", rule: "liveness-restart-in-window",
			run:  base().Inject(10*s, "stall", "a").Restart(20*s, "a", timeline.CauseLiveness).Restart(21*s, "c", timeline.CauseLiveness),
			want: verdict.Fail, at: 21 * s, figures: map[string]float64{"other_liveness_restarts": 1}},
		{name: "within param tightens", rule: "liveness-restart-in-window", params: map[string]string{"within": "8s"},
			run:  base().Inject(10*s, "stall", "a").Restart(22*s, "a", timeline.CauseLiveness),
			want: verdict.Fail, at: 22 * s},
		{name: "fault skipped", rule: "liveness-restart-in-window",
			run: base().Skip(10*s, "stall", "target has no admin endpoint"), want: verdict.Inconclusive, observed: "no admin endpoint"},
		{name: "no fault at all", rule: "liveness-restart-in-window", run: base(), want: verdict.Inconclusive, observed: "no fault"},

		// readiness-withdrawn-in-window: [1s, 3s] + 2s propagation = by 5s
		{name: "withdrawn in window", rule: "readiness-withdrawn-in-window",
			run: base().Inject(10*s, "stall", "a").NotReady(13*s, "a"), want: verdict.Pass, observed: "1 of 1"},
		{name: "withdrawn in window, explained", rule: "readiness-withdrawn-in-window",
			run: base().Inject(10*s, "stall", "a").ProbeFailed(ms(11200), "a", timeline.ProbeReadiness, "Readiness probe failed: HTTP probe failed with statuscode: 503").
				NotReady(13*s, "a"),
			want: verdict.Pass, evidence: "first readiness probe failure 1.2s after the fault: Readiness probe failed"},
		{name: "withdrawn late", rule: "readiness-withdrawn-in-window",
			run: base().Inject(10*s, "stall", "a").NotReady(ms(16500), "a"), want: verdict.Fail, at: 15 * s, observed: "0 of 1"},
		{name: "withdrawn too early", rule: "readiness-withdrawn-in-window",
			run: base().Inject(10*s, "stall", "a").NotReady(ms(10300), "a"), want: verdict.Fail, at: 15 * s},
		{name: "never withdrawn", rule: "readiness-withdrawn-in-window",
			run: base().Inject(10*s, "stall", "a"), want: verdict.Fail, at: 15 * s, observed: "never withdrawn"},
		{name: "never withdrawn, the fault lasting as long as detection may take", rule: "readiness-withdrawn-in-window",
			run: base().Inject(10*s, "stall", "a").Revert(13*s, "stall", "a"), want: verdict.Fail, at: 15 * s, observed: "never withdrawn"},
		{name: "never withdrawn, the fault shorter than detection may take", rule: "readiness-withdrawn-in-window",
			run: base().Inject(10*s, "stall", "a").Revert(ms(12500), "stall", "a"), want: verdict.Inconclusive, observed: "never withdrawn"},
		{name: "shared outage: all must withdraw", rule: "readiness-withdrawn-in-window",
			run: base().Inject(10*s, "db-latency", "").NotReady(12*s, "a"), want: verdict.Fail, observed: "1 of 3", at: 15 * s},
		{name: "shared outage: min-withdrawn 1", rule: "readiness-withdrawn-in-window", params: map[string]string{"min-withdrawn": "1"},
			run: base().Inject(10*s, "db-latency", "").NotReady(12*s, "a"), want: verdict.Pass},

		// min-ready-endpoints
		{name: "one pod withdrawn", rule: "min-ready-endpoints",
			run: base().NotReady(13*s, "a").Ready(25*s, "a"), want: verdict.Pass, figures: map[string]float64{"min_ready": 2}},
		{name: "all withdrawn", rule: "min-ready-endpoints",
			run:  base().NotReady(13*s, "a").NotReady(ms(13200), "b").NotReady(ms(13400), "c").Ready(20*s, "a", "b", "c"),
			want: verdict.Fail, at: ms(13400), figures: map[string]float64{"min_ready": 0}},
		{name: "min 3 with one withdrawn", rule: "min-ready-endpoints", params: map[string]string{"min": "3"},
			run: base().NotReady(13*s, "a").Ready(25*s, "a"), want: verdict.Fail, at: 13 * s, observed: "below 3 for 12s"},
		{name: "short dip within grace", rule: "min-ready-endpoints", params: map[string]string{"min": "3", "grace": "1s"},
			run: base().NotReady(13*s, "a").Ready(ms(13500), "a"), want: verdict.Pass},

		// terminating-before-exit
		{name: "withdrawn before exit", rule: "terminating-before-exit",
			run: base().Deleting(10*s, "a", 10*s).Killing(ms(10500), "a").Terminating(ms(10800), "a").ExitedReported(ms(13100), 13*s, "a", 0).
				Removed(ms(13200), "a").Deleted(ms(13500), "a"),
			want: verdict.Pass, figures: map[string]float64{"min_lead_s": 2.2}},
		{name: "withdrawn before exit, Killing event missing", rule: "terminating-before-exit",
			run:  base().Deleting(10*s, "a", 10*s).Terminating(ms(10800), "a").ExitedReported(ms(13100), 13*s, "a", 0),
			want: verdict.Inconclusive, observed: "a: lead not shown"},
		{name: "exit while ready", rule: "terminating-before-exit",
			run:  base().Deleting(10*s, "a", 10*s).Exited(ms(10500), "a", 0).Terminating(11*s, "a"),
			want: verdict.Fail, at: ms(10500), observed: "exited while still ready"},
		{name: "exit never seen", rule: "terminating-before-exit",
			run: base().Deleting(10*s, "a", 10*s).Terminating(11*s, "a"), want: verdict.Fail, at: 10 * s},
		{name: "nothing deleted", rule: "terminating-before-exit", run: base(), want: verdict.Inconclusive, observed: "no pod was deleted"},

		// no-traffic-after-withdrawal (allowance 2s)
		{name: "balancer honours withdrawal", rule: "no-traffic-after-withdrawal",
			run: base().NotReady(13*s, "a").OK(14*s, "a").Ready(25*s, "a"), want: verdict.Pass, figures: map[string]float64{"after_withdrawal": 0}},
		{name: "new request after allowance", rule: "no-traffic-after-withdrawal",
			run: base().NotReady(13*s, "a").OK(16*s, "a").Ready(25*s, "a"), want: verdict.Fail, at: 16 * s, figures: map[string]float64{"after_withdrawal": 1}},
		{name: "keep-alive leak is a figure", rule: "no-traffic-after-withdrawal",
			run:  base().NotReady(13*s, "a").Request(16*s, "a", 200, "", true).Ready(25*s, "a"),
			want: verdict.Pass, figures: map[string]float64{"keepalive_leak": 1, "after_withdrawal": 0}},
		{name: "keep-alive leak counted", rule: "no-traffic-after-withdrawal", params: map[string]string{"count-reused": "true"},
			run:  base().NotReady(13*s, "a").Request(16*s, "a", 200, "", true).Ready(25*s, "a"),
			want: verdict.Fail, at: 16 * s},
		// An idle connection's first use after the allowance is leakage (the pod can only end
		// keep-alive on a response); a second request on it means the pod did not.
		{name: "idle connection used once after the allowance", rule: "no-traffic-after-withdrawal", params: map[string]string{"count-reused": "true"},
			run:  base().NotReady(13*s, "a").Reused(16*s, "a", "10.0.0.1:4000").Reused(17*s, "a", "10.0.0.1:4001").Ready(25*s, "a"),
			want: verdict.Pass, figures: map[string]float64{"keepalive_leak": 2, "keepalive_not_ended": 0}},
		{name: "connection kept after answering on it", rule: "no-traffic-after-withdrawal", params: map[string]string{"count-reused": "true"},
			run:  base().NotReady(13*s, "a").Reused(16*s, "a", "10.0.0.1:4000").Reused(ms(16100), "a", "10.0.0.1:4000").Ready(25*s, "a"),
			want: verdict.Fail, at: ms(16100), evidence: "already answered on since", figures: map[string]float64{"keepalive_not_ended": 1}},
		// A gRPC server can end a connection at any moment (GOAWAY): calls a running pod out of
		// rotation keeps taking on its pinned connection fail the rule whatever count-reused says;
		// a terminating pod's are the drain rules' (it may serve through its withdrawal delay).
		{name: "gRPC calls pinned to a pod out of rotation", rule: "no-traffic-after-withdrawal",
			run: base().NotReady(13*s, "a").Reused(14*s, "a", "10.0.0.1:4000").GRPC("OK").Reused(16*s, "a", "10.0.0.1:4000").GRPC("OK").
				Reused(17*s, "a", "10.0.0.1:4000").GRPC("OK").Ready(25*s, "a"),
			want: verdict.Fail, at: 16 * s, evidence: "pinned to it", figures: map[string]float64{"grpc_pinned_after_withdrawal": 2, "keepalive_leak": 0}},
		{name: "gRPC calls on a terminating pod's connection", rule: "no-traffic-after-withdrawal",
			run:  base().Terminating(13*s, "a").Reused(16*s, "a", "10.0.0.1:4000").GRPC("OK").Reused(17*s, "a", "10.0.0.1:4000").GRPC("OK"),
			want: verdict.Pass, figures: map[string]float64{"grpc_pinned_after_withdrawal": 0, "keepalive_not_ended": 1}},
		{name: "connection kept, not counted", rule: "no-traffic-after-withdrawal",
			run:  base().NotReady(13*s, "a").Reused(16*s, "a", "10.0.0.1:4000").Reused(ms(16100), "a", "10.0.0.1:4000").Ready(25*s, "a"),
			want: verdict.Pass, figures: map[string]float64{"keepalive_not_ended": 1}},
		// …with kube-proxy's rules read from the node, the measured moment routing stopped replaces
		// the allowance for new connections: later than the allowance on a busy node…
		{name: "routing stopped late (measured)", rule: "no-traffic-after-withdrawal",
			run:  base().NotReady(13*s, "a").OK(16*s, "a").Unrouted(ms(15800), ms(16300), "a").Ready(25*s, "a"),
			want: verdict.Pass, figures: map[string]float64{"after_withdrawal": 0, "routing_lag_max_s": 3.3}},
		{name: "new request after measured routing stop", rule: "no-traffic-after-withdrawal",
			run:  base().NotReady(13*s, "a").Unrouted(ms(15800), ms(16300), "a").OK(ms(16500), "a").Ready(25*s, "a"),
			want: verdict.Fail, at: ms(16500), figures: map[string]float64{"after_withdrawal": 1}},
		// Only the ingress node's kube-proxy carries the host load: another node's earlier stop does not count.
		{name: "another node's routing stop", rule: "no-traffic-after-withdrawal",
			run: base().NotReady(13*s, "a").UnroutedOn(ms(13100), ms(13600), "a", "w1").OK(16*s, "a").
				Unrouted(ms(15800), ms(16300), "a").Ready(25*s, "a"),
			want: verdict.Pass, figures: map[string]float64{"after_withdrawal": 0}},
		// …or earlier: a new connection after it cannot have been kube-proxy's lag.
		{name: "routing stopped early (measured)", rule: "no-traffic-after-withdrawal",
			run:  base().NotReady(13*s, "a").Unrouted(ms(13100), ms(13600), "a").OK(14*s, "a").Ready(25*s, "a"),
			want: verdict.Fail, at: 14 * s, figures: map[string]float64{"after_withdrawal": 1, "routing_lag_max_s": 0.6}},
		// Issue #31's case and its three explanations. Withdrawn at 46.06 s, the node's rules without
		// the pod at 46.51 s (listed at 45.94 s), then new connections served by the pod.
		// (1) The kernel DNAT'd them to it (conntrack flows of connections opened after the rules
		// read): the rules read was early; judged from the allowance, within which they fall.
		{name: "kernel routed after the rules read (#31 explanation 1)", rule: "no-traffic-after-withdrawal",
			run: base().NotReady(ms(46060), "a").Unrouted(ms(45940), ms(46510), "a").
				OK(ms(46630), "a").Opened(ms(46630)).Flowed().OK(ms(46730), "a").Opened(ms(46730)).Flowed().
				OK(ms(47030), "a").Opened(ms(47030)).Flowed().Ready(55*s, "a"),
			want: verdict.Pass, evidence: "yet its kernel DNAT'd 3 new connections to it after that (the last opened at 47.03s",
			observed: "on 1 withdrawals the kernel DNAT'd new connections", figures: map[string]float64{"after_withdrawal": 0, "routing_contradicted": 1}},
		// …and past the allowance it still FAILs: kube-proxy slower than the oracle allows.
		{name: "kernel routed past the allowance", rule: "no-traffic-after-withdrawal",
			run: base().NotReady(ms(46060), "a").Unrouted(ms(45940), ms(46510), "a").
				OK(ms(46630), "a").Opened(ms(46630)).Flowed().OK(ms(48500), "a").Opened(ms(48500)).Flowed().Ready(55*s, "a"),
			want: verdict.Fail, at: ms(48500), evidence: "on a new connection opened at 48.5s, after routing stopped (48.06s)", figures: map[string]float64{"after_withdrawal": 1}},
		// The kernel agreed: dated connections after the read went to the other pods.
		{name: "kernel agreed with the rules read", rule: "no-traffic-after-withdrawal",
			run: base().NotReady(ms(46060), "a").Unrouted(ms(45940), ms(46510), "a").
				OK(ms(46630), "b").Opened(ms(46630)).Flowed().OK(ms(46730), "c").Opened(ms(46730)).Flowed().Ready(55*s, "a"),
			want: verdict.Pass, observed: "the kernel agreed: none of the 2 new connections", figures: map[string]float64{"routing_contradicted": 0, "routing_lag_min_s": 0, "routing_lag_max_s": 0.45}},
		// (2) The connections were opened before routing stopped and carried their first request
		// after it (net/http hands a finished dial to the next request waiting): leakage, not a FAIL.
		{name: "connections opened before routing stopped (#31 explanation 2)", rule: "no-traffic-after-withdrawal",
			run: base().NotReady(ms(46060), "a").Unrouted(ms(45940), ms(46510), "a").
				OK(ms(46630), "a").Opened(ms(46200)).OK(ms(46760), "a").Opened(ms(46300)).Ready(55*s, "a"),
			want: verdict.Pass, evidence: "on a connection opened at 46.2s, before routing stopped (46.51s)",
			observed: "2 more went over connections opened before routing stopped", figures: map[string]float64{"after_withdrawal": 0, "preopened_after_withdrawal": 2}},
		// …while one opened after it, with no conntrack flow to say the kernel chose it (the header
		// named the pod), is a new connection after routing stopped.
		{name: "connection opened after routing stopped", rule: "no-traffic-after-withdrawal",
			run: base().NotReady(ms(46060), "a").Unrouted(ms(45940), ms(46510), "a").
				OK(ms(46630), "a").Opened(ms(46600)).Ready(55*s, "a"),
			want: verdict.Fail, at: ms(46630), evidence: "opened at 46.6s, after routing stopped (46.51s)", observed: "dated by their opening (1)"},
		// (3) A wrong attribution (an earlier connection's flow on a reused client port) is refused
		// by conntrack.Attribute (observers/conntrack TestAttributeDatesTheConnection): such a request
		// reaches this rule with no pod.
		// Kept-alive connections are not routed: the allowance still applies to them.
		{name: "keep-alive leak counted from the allowance", rule: "no-traffic-after-withdrawal", params: map[string]string{"count-reused": "true"},
			run:  base().NotReady(13*s, "a").Unrouted(ms(13100), ms(13600), "a").Request(14*s, "a", 200, "", true).Ready(25*s, "a"),
			want: verdict.Pass},
		// A withdrawn pod the load was not using shows nothing about its kept-alive connections.
		{name: "idle pod withdrawn, keep-alive unseen", rule: "no-traffic-after-withdrawal", params: map[string]string{"count-reused": "true"},
			run: starve().NotReady(13*s, "c").Ready(25*s, "c"), want: verdict.Inconclusive},
		{name: "idle pod withdrawn, keep-alive not asked", rule: "no-traffic-after-withdrawal",
			run: starve().NotReady(13*s, "c").Ready(25*s, "c"), want: verdict.Pass},
		// A pod the watch never saw unrouted (kube-proxy's terminating fallback) keeps the allowance.
		{name: "routing watched, pod never unrouted", rule: "no-traffic-after-withdrawal",
			run:  base().NotReady(13*s, "a").Unrouted(ms(2000), ms(2500), "b").OK(16*s, "a").Ready(25*s, "a"),
			want: verdict.Fail, at: 16 * s, observed: "kube-proxy was not seen to stop routing"},
		// In-cluster load: each agent's last new request on a withdrawn pod is its node's lag.
		{name: "routing lag by load agent", rule: "no-traffic-after-withdrawal",
			run: base().NotReady(13*s, "a").OK(ms(13400), "a").From("ag-0@n1").OK(ms(14700), "a").From("ag-1@n2").
				OK(ms(13200), "a").From("ag-1@n2").Request(ms(14900), "a", 200, "", true).From("ag-0@n1").Ready(25*s, "a"),
			want: verdict.Pass, observed: "by load agent (its node's kube-proxy): ag-0@n1 400ms, ag-1@n2 1.7s",
			figures: map[string]float64{"new_conn_after_withdrawal_s@ag-0@n1": 0.4, "new_conn_after_withdrawal_s@ag-1@n2": 1.7}},
		{name: "traffic after return is fine", rule: "no-traffic-after-withdrawal",
			run: base().NotReady(13*s, "a").Ready(25*s, "a").OK(26*s, "a"), want: verdict.Pass},
		{name: "no withdrawal", rule: "no-traffic-after-withdrawal", run: base(), want: verdict.Inconclusive, observed: "nothing to judge"},

		// failed-requests-budget
		{name: "no failures", rule: "failed-requests-budget", run: base(), want: verdict.Pass, observed: "0 of 1170"},
		{name: "classified within budget", rule: "failed-requests-budget", params: map[string]string{"max": "6"}, run: failures(), want: verdict.Pass,
			figures: map[string]float64{"failed": 6, "failed_during_termination": 2, "failed_connection_reuse": 1, "failed_before_detection": 1,
				"failed_after_withdrawal": 1, "failed_other": 1}},
		{name: "over budget", rule: "failed-requests-budget", params: map[string]string{"max": "5"}, run: failures(), want: verdict.Fail, at: 38 * s},
		{name: "a resent request counts", rule: "failed-requests-budget", run: base().Resent(5*s, "a"), want: verdict.Fail, at: 5 * s,
			figures: map[string]float64{"failed": 1, "failed_connection_reuse": 1}},
		{name: "cut in flight by the exit", rule: "failed-requests-budget", params: map[string]string{"max": "2"},
			run: base().Deleting(10*s, "a", 10*s).Terminating(ms(10800), "a").Exited(11*s, "a", 0).
				Request(ms(9300), "a", 0, timeline.ErrReset, false).Took(ms(1700)).
				Request(8*s, "a", 500, timeline.ErrHTTP5xx, false).Took(ms(500)),
			want: verdict.Pass, figures: map[string]float64{"failed": 2, "failed_during_termination": 1, "failed_other": 1}},
		{name: "cut before the watch saw the deletion", rule: "failed-requests-budget", params: map[string]string{"max": "2"},
			run: base().DeletingSeen(ms(10300), ms(10050), "a", 10*s).Exited(11*s, "a", 0).
				Request(ms(9300), "a", 0, timeline.ErrReset, false).Took(ms(800)).
				Request(ms(8000), "a", 0, timeline.ErrReset, false).Took(ms(900)),
			want: verdict.Pass, figures: map[string]float64{"failed": 2, "failed_during_termination": 1, "failed_other": 1}},
		{name: "class budget", rule: "failed-requests-budget", params: map[string]string{"max": "10", "max-during-termination": "1"},
			run: failures(), want: verdict.Fail, at: 12 * s},
		{name: "ratio budget", rule: "failed-requests-budget", params: map[string]string{"max": "100", "max-ratio": "0.001"},
			run: failures(), want: verdict.Fail, at: ms(10500)},

		// recovery-within: readiness recovery [0s, 2s] + 2s = by 4s
		{name: "recovered", rule: "recovery-within",
			run:  base().Inject(10*s, "db-latency", "").NotReady(12*s, "a").Revert(20*s, "db-latency", "").Ready(22*s, "a"),
			want: verdict.Pass, figures: map[string]float64{"recovery_s": 2}},
		{name: "recovered late", rule: "recovery-within",
			run:  base().Inject(10*s, "db-latency", "").NotReady(12*s, "a").Revert(20*s, "db-latency", "").Ready(26*s, "a"),
			want: verdict.Fail, at: 26 * s},
		{name: "never recovered", rule: "recovery-within",
			run:  base().Inject(10*s, "db-latency", "").NotReady(12*s, "a").Revert(20*s, "db-latency", ""),
			want: verdict.Fail, at: 24 * s, observed: "not recovered"},
		// A run that ends before the bound (revert 38 s, due by 42 s, the last entry at 40 s) cannot
		// show a recovery still to come: INCONCLUSIVE, not FAIL (podinfo's process-freeze, 2026-12-07).
		{name: "run ended before the bound", rule: "recovery-within",
			run:  base().Inject(10*s, "db-latency", "").NotReady(12*s, "a").Revert(38*s, "db-latency", ""),
			want: verdict.Inconclusive, observed: "not recovered when the run ended"},
		{name: "pod delete replaced", rule: "recovery-within",
			run:  base().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 10*s).Terminating(ms(10800), "a").Created(11*s, "d").Ready(13*s, "d"),
			want: verdict.Pass, figures: map[string]float64{"recovery_s": 3}},
		// The pods booted in 0.8s before the fault: the replacement is due 4s + 0.8s × 1.5 + 2s = 7.2s
		// after the deletion, not after the whole startup budget.
		{name: "pod delete replaced slower than this run's pods booted", rule: "recovery-within",
			run:  base().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 10*s).Terminating(ms(10800), "a").Created(11*s, "d").Ready(18*s, "d"),
			want: verdict.Fail, at: 18 * s, observed: "LATE"},
		// The bound is not measured on the recovery it judges (N5): a replacement whose container
		// started 14 s after the deletion is late however fast it was ready after that…
		{name: "pod delete: replacement started late, ready at once", rule: "recovery-within",
			run:  base().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 10*s).Terminating(ms(10800), "a").Created(11*s, "d").Started(24*s, "d").Ready(25*s, "d"),
			want: verdict.Fail, at: 25 * s, observed: "LATE", figures: map[string]float64{"recovery_s": 15}},
		// …and so is one ready 6 s after a fast start (9 s > 7.2 s).
		{name: "pod delete: replacement ready long after it started", rule: "recovery-within",
			run:  base().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 10*s).Terminating(ms(10800), "a").Created(11*s, "d").Started(13*s, "d").Ready(19*s, "d"),
			want: verdict.Fail, at: 19 * s, observed: "LATE"},
		{name: "flapping: chain judged by its last fault", rule: "recovery-within", params: map[string]string{"within": "6s"},
			run: base().Inject(10*s, "db-down", "").NotReady(12*s, "a", "b", "c").Revert(13*s, "db-down", "").
				Inject(18*s, "db-down", "").Revert(21*s, "db-down", "").Ready(24*s, "a", "b", "c"),
			want: verdict.Pass, observed: "superseded"},
		{name: "flapping: never back after the last", rule: "recovery-within", params: map[string]string{"within": "6s"},
			run: base().Inject(10*s, "db-down", "").NotReady(12*s, "a", "b", "c").Revert(13*s, "db-down", "").
				Inject(18*s, "db-down", "").Revert(21*s, "db-down", "").Ready(24*s, "a", "b"),
			want: verdict.Fail, at: 27 * s},
		{name: "gap longer than the bound", rule: "recovery-within", params: map[string]string{"within": "3s"},
			run: base().Inject(10*s, "db-down", "").NotReady(12*s, "a").Revert(13*s, "db-down", "").
				Inject(18*s, "db-down", "").Ready(19*s, "a").Revert(21*s, "db-down", ""),
			want: verdict.Fail, at: 16 * s},
		{name: "later dip listed, not failed", rule: "recovery-within",
			run: base().Inject(10*s, "db-latency", "").NotReady(12*s, "a").Revert(20*s, "db-latency", "").Ready(22*s, "a").
				NotReady(30*s, "b"),
			want: verdict.Pass, figures: map[string]float64{"recovery_s": 2, "later_dips": 1}},
		{name: "baseline from before an earlier outage", rule: "recovery-within",
			run: base().NotReady(8*s, "a", "b", "c").Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 10*s).Terminating(ms(10800), "a").
				Ready(12*s, "b", "c").Created(11*s, "d").Ready(15*s, "d"),
			want: verdict.Pass, figures: map[string]float64{"recovery_s": 5}},
		{name: "baseline not reached", rule: "recovery-within",
			run: base().NotReady(8*s, "a", "b", "c").Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 10*s).Terminating(ms(10800), "a").
				Ready(12*s, "b", "c"),
			want: verdict.Fail, at: ms(17200), observed: "not recovered"},
		{name: "within param", rule: "recovery-within", params: map[string]string{"within": "1s"},
			run:  base().Inject(10*s, "db-latency", "").NotReady(12*s, "a").Revert(20*s, "db-latency", "").Ready(22*s, "a"),
			want: verdict.Fail, at: 22 * s},

		// no-forced-kill (grace 10s from the deletion, tolerance 1s)
		{name: "clean exit", rule: "no-forced-kill", run: base().Deleting(10*s, "a", 10*s).Exited(13*s, "a", 0), want: verdict.Pass,
			figures: map[string]float64{"forced_kills": 0, "longest_exit_s": 3}},
		{name: "sigkill", rule: "no-forced-kill", run: base().Deleting(10*s, "a", 10*s).Exited(20*s, "a", 137), want: verdict.Fail, at: 20 * s,
			observed: "exit code 137"},
		{name: "exit after grace", rule: "no-forced-kill", run: base().Deleting(10*s, "a", 10*s).Exited(22*s, "a", 143), want: verdict.Fail, at: 22 * s},
		{name: "forced kill expected and seen", rule: "no-forced-kill", params: map[string]string{"expected": "true"},
			run: base().Deleting(10*s, "a", 5*s).Exited(15*s, "a", 137), want: verdict.Pass},
		{name: "forced kill expected, clean exit", rule: "no-forced-kill", params: map[string]string{"expected": "true"},
			run: base().Deleting(10*s, "a", 5*s).Exited(12*s, "a", 0), want: verdict.Fail, at: 0},

		// startup-not-killed
		{name: "clean bootstrap", rule: "startup-not-killed", run: base().Restart(30*s, "a", timeline.CauseLiveness), want: verdict.Pass,
			figures: map[string]float64{"pods_ready": 3}},
		{name: "liveness kill during bootstrap", rule: "startup-not-killed",
			run:  base().Created(2*s, "d").Restart(8*s, "d", timeline.CauseLiveness).ContainerReady(20*s, "d"),
			want: verdict.Fail, at: 8 * s, figures: map[string]float64{"bootstrap_kills": 1}},
		{name: "startup kill", rule: "startup-not-killed", run: base().Created(2*s, "d").Restart(33*s, "d", timeline.CauseStartup),
			want: verdict.Fail, at: 33 * s},
		{name: "liveness kill while re-bootstrapping", rule: "startup-not-killed",
			run:  base().Restart(20*s, "a", timeline.CauseOOM).Restart(25*s, "a", timeline.CauseLiveness).ContainerReady(30*s, "a"),
			want: verdict.Fail, at: 25 * s},
		{name: "liveness kill after re-bootstrap", rule: "startup-not-killed",
			run:  base().Restart(20*s, "a", timeline.CauseOOM).ContainerReady(22*s, "a").Restart(35*s, "a", timeline.CauseLiveness),
			want: verdict.Pass},
		{name: "nobody became ready", rule: "startup-not-killed", run: vt.New().Created(0, "a"), want: verdict.Fail, at: 0},
	}
	for _, tc := range cases {
		t.Run(tc.rule+"/"+tc.name, func(t *testing.T) {
			res, err := verdict.Evaluate(tc.run.Input(), verdict.Spec{Rule: tc.rule, Params: tc.params})
			if err != nil {
				t.Fatal(err)
			}
			dump := func() string { b, _ := json.MarshalIndent(res, "", "  "); return string(b) }
			if res.Status != tc.want {
				t.Fatalf("status %s, want %s\n%s", res.Status, tc.want, dump())
			}
			if res.Rule != tc.rule || res.Title == "" || res.Expected == "" || res.Observed == "" {
				t.Errorf("result lacks rule, title, expected or observed:\n%s", dump())
			}
			if tc.observed != "" && !strings.Contains(res.Observed, tc.observed) {
				t.Errorf("observed %q does not contain %q", res.Observed, tc.observed)
			}
			if tc.evidence != "" && !hasEvidence(res, tc.evidence) {
				t.Errorf("no evidence note contains %q\n%s", tc.evidence, dump())
			}
			for k, v := range tc.figures {
				if got, ok := res.Figures[k]; !ok || got != v {
					t.Errorf("figure %s = %v (present %v), want %v\n%s", k, got, ok, v, dump())
				}
			}
			if tc.want == verdict.Fail {
				if res.At == nil {
					t.Fatalf("failed without At\n%s", dump())
				}
				if *res.At != tc.at {
					t.Errorf("At = %s, want %s\n%s", *res.At, tc.at, dump())
				}
				if len(res.Evidence) == 0 && !strings.Contains(res.Observed, "nothing to judge") && !strings.Contains(res.Observed, "no pod") {
					t.Errorf("failed without evidence\n%s", dump())
				}
			} else if res.At != nil {
				t.Errorf("%s result has At %s", res.Status, *res.At)
			}
		})
	}
}

// starve has three ready pods but only a and b serving.
func starve() *vt.Builder {
	b := vt.New().Ready(0, "a", "b", "c")
	for t := s; t < 30*s; t += 50 * time.Millisecond {
		pod := "a"
		if (t/(50*time.Millisecond))%2 == 0 {
			pod = "b"
		}
		b.OK(t, pod)
	}
	return b
}

// failures has one failed request of every class:
//   - 10.5s reset from a while a terminates, 12s refused while a terminates → during-termination (2)
//   - 20s reset on a reused connection to b → connection-reuse
//   - 25.5s 503 from b after db-latency on b starts at 25s, before b withdraws at 27s → before-detection
//   - 30s 503 from b, withdrawn at 27s (more than the 2s allowance before) → after-withdrawal
//   - 38s 500 from c with nothing going on → other
func failures() *vt.Builder {
	return base().
		Deleting(10*s, "a", 10*s).Terminating(ms(10800), "a").Exited(13*s, "a", 0).
		Request(ms(10500), "a", 0, timeline.ErrReset, false).
		Request(12*s, "", 0, timeline.ErrRefused, false).
		Request(20*s, "", 0, timeline.ErrReset, true).
		Inject(25*s, "db-latency", "b").
		Request(ms(25500), "b", 503, timeline.ErrHTTP5xx, false).
		NotReady(27*s, "b").
		Request(30*s, "b", 503, timeline.ErrHTTP5xx, false).
		Revert(31*s, "db-latency", "b").Ready(33*s, "b").
		Request(38*s, "c", 500, timeline.ErrHTTP5xx, false)
}

// hasEvidence reports whether one of r's evidence notes contains sub.
func hasEvidence(r verdict.Result, sub string) bool {
	for _, ev := range r.Evidence {
		if strings.Contains(ev.Note, sub) {
			return true
		}
	}
	return false
}
