package verdict_test

import (
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// Audit N15 (§1 (3)): a crash the kubelet restarts at once can reach the API coalesced, running →
// running(not ready, restartCount+1) with no terminated state seen: only the restart entry, with
// its finishedAt, says the process ended. Such a departure is not a readiness withdrawal.
func TestCoalescedCrashIsNotAWithdrawal(t *testing.T) {
	crash := func(b *vt.Builder, seen, finished time.Duration, pod string) *vt.Builder {
		at := vt.Start.Add(finished).Truncate(time.Second)
		return b.Entry(timeline.Entry{T: seen, Kind: timeline.KindRestart, Pod: pod, APITime: &at, Restart: &timeline.ContainerRestart{
			Container: vt.Container, RestartCount: 1, Reason: "Error", ExitCode: 2, FinishedAt: &at, Cause: timeline.CauseAppExit}})
	}
	judgeRestartCases(t, "readiness-withdrawn-in-window", []restartCase{
		{name: "withdrawn by readiness", run: base().Inject(10*s, "db-down", "").NotReady(12*s, "a", "b", "c"), want: verdict.Pass},
		{name: "two pods crashed, their restarts seen before the endpoint change",
			run:  crash(crash(base().Inject(10*s, "db-down", ""), ms(11800), ms(11500), "a"), ms(11900), ms(11500), "b").NotReady(12*s, "a", "b", "c"),
			want: verdict.Fail, at: 15 * s, evidence: "a left rotation 2s after the fault, but not by readiness: its container app restarted"},
		{name: "a crash seen only after the endpoint change, finished before it",
			run:  crash(base().Inject(10*s, "db-down", "").NotReady(12*s, "a", "b", "c"), 16*s, ms(11500), "a"),
			want: verdict.Fail, at: 15 * s, evidence: "not by readiness: its container app restarted"},
	})
}
