package verdict_test

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/verdict"
)

// An overload the target kept up with shows no reason to withdraw: a fast app that served all 400/s
// (the DB-backed app: 100 % ok, p99 571 ms) is INCONCLUSIVE for readiness-withdrawn-in-window,
// never a FAIL for being fast. A target that was saturated (it shed or timed out most of the excess)
// and still never withdrew FAILs, as the always-ready control must.
func TestOverloadWithdrawalRestsOnSaturation(t *testing.T) {
	judge := func(in verdict.Input) verdict.Result {
		t.Helper()
		res, err := verdict.Evaluate(in, verdict.Spec{Rule: "readiness-withdrawn-in-window", Params: map[string]string{"fault": "overload"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	fast := judge(overloadRun(func(_, i int) (int, time.Duration) {
		if i%100 == 0 {
			return 200, 571 * time.Millisecond
		}
		return 200, 40 * time.Millisecond
	}))
	if fast.Status != verdict.Inconclusive || len(fast.Unshown) == 0 ||
		!strings.Contains(fast.Unshown[0], "did not saturate the target (offered 400/s, served 399/s OK by the overload's end (100 %), p99 571ms: not saturated)") {
		t.Errorf("fast target: %s %q unshown %q; want INCONCLUSIVE, not saturated", fast.Status, fast.Observed, fast.Unshown)
	}
	shed := judge(overloadRun(func(_, i int) (int, time.Duration) {
		if i%8 < 3 {
			return 200, 200 * time.Millisecond
		}
		return 503, 2 * time.Millisecond
	}))
	if shed.Status != verdict.Fail || !strings.Contains(shed.Observed, "never withdrawn") {
		t.Errorf("saturated target that never withdrew: %s %q; want FAIL", shed.Status, shed.Observed)
	}
	queued := judge(overloadRun(func(sec, _ int) (int, time.Duration) {
		return 200, time.Duration(sec) * 2 * time.Second // a queue that grows: answers come ever later
	}))
	if queued.Status != verdict.Fail {
		t.Errorf("queueing target that never withdrew: %s %q; want FAIL (it fell behind: saturated)", queued.Status, queued.Observed)
	}
}
