// Package verdict judges a recorded run (timeline entries, requests, fault windows) against a
// scenario's expectations and the timing oracle. Judgement is pure: no cluster access.
//
// Rules are data: each lives in its own file, registers itself by name with its parameters, and is
// a func(Input) Result whose Result carries Expected (with the oracle window in words and numbers),
// Observed (numbers), Evidence (timeline Seq or request Seq, with T and a note), At (when it
// failed), Figures and the Windows it judged against. A scenario lists rules by name:
//
//	expect:
//	  - no-liveness-restarts
//	  - rule: min-ready-endpoints
//	    params: {min: 2}
//
// The rules (see docs/verdicts.md for parameters and evidence):
//
//	no-liveness-restarts          no restart with cause liveness on any pod
//	liveness-restart-in-window    the faulted pod is restarted by liveness within its window; no other pod is
//	readiness-withdrawn-in-window the faulted pods' endpoints go ready=false within the readiness window
//	min-ready-endpoints           at least N ready endpoints at every moment of the load
//	terminating-before-exit       a deleted pod's endpoint is withdrawn before its process exits
//	no-traffic-after-withdrawal   a withdrawn pod serves no new requests (keep-alive leakage reported apart)
//	failed-requests-budget        failed requests within budget, each classified
//	recovery-within               all endpoints ready again within a bound after the fault ends
//	no-forced-kill                no deleted pod exceeds its grace period (or, expected=true, one must)
//	startup-not-killed            no startup or liveness kill during bootstrap
//
// A rule that finds nothing of what it judges on the timeline (no fault, no deletion, no load:
// "nothing to judge") is INCONCLUSIVE, never PASS, so a run whose fault silently did nothing cannot
// pass, and a FAIL always rests on evidence. A PASS must be earned: each rule declares what it
// needs (Needs), and Evaluate makes a PASS INCONCLUSIVE when the run could not show it — a fault
// skipped or without proof of effect, a watch gap, an unknown restart cause, unattributable
// requests — naming each gap in Result.Unshown.
package verdict
