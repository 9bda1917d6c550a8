package compare_test

import (
	"os"
	"time"

	"github.com/probegate/probegate/internal/compare"
	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// Three nights: the withdrawal lead shrinks toward its 2 s minimum, recovery crosses its bound.
func ExampleWriteText() {
	th, _ := compare.ParseThresholds([]string{"recovery-within=50"})
	night := func(leadS, recoveryS float64, p99 time.Duration, st verdict.Status) reports.ScenarioReport {
		s := scenario("pod-delete", lead(verdict.Pass, leadS), recovery(st, recoveryS), restarts(0))
		s.Summary = &reports.Summary{Requests: reports.RequestFigures{P99: p99}}
		return s
	}
	cmp, _ := compare.Compare([]compare.Run{
		run("_out/night1/report.json", night(5.4, 7.6, 23*time.Millisecond, verdict.Pass), scenario("gone")),
		run("_out/night2/report.json", night(5.3, 7.9, 25*time.Millisecond, verdict.Pass)),
		run("_out/night3/report.json", night(2.3, 16, 31*time.Millisecond, verdict.Fail), scenario("fresh")),
	}, th)
	_ = compare.WriteText(os.Stdout, cmp)
	// Output:
	// old 1  _out/night1/report.json
	// old 2  _out/night2/report.json
	// new    _out/night3/report.json
	// drift: a measure that lost more than 25% of its headroom to its bound (recovery-within 50%)
	//
	// pod-delete/good            PASS → PASS → FAIL                                                                                              changed
	//   terminating-before-exit  PASS → PASS → PASS  withdrawal lead before exit  5.4s → 5.3s → 2.3s  -3s, 91% of the headroom     ≥ 2s          DRIFT
	//   recovery-within          PASS → PASS → FAIL  recovery time                7.6s → 7.9s → 16s   +8.1s, 114% of the headroom  ≤ 15s         NEW FAIL, DRIFT
	//   no-unexpected-restarts   PASS → PASS → PASS  unexpected restarts          0 → 0 → 0 restarts  +0 restarts                  ≤ 0 restarts
	//   load p99 latency                                                          23ms → 25ms → 31ms  +6ms
	//
	// only in the old runs: gone/good
	// only in the new run: fresh/good
	//
	// 2 regressions (1 new FAIL, 2 drifts); 1 status change
}
