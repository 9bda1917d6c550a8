package verdict_test

import (
	"testing"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
)

// liveness-restart-in-window judged the first liveness restart of the
// faulted pod and ignored every later one, so a restart loop after the fault was hidden.
func TestLivenessRestartLoopFailsTheWindowRule(t *testing.T) {
	judgeRestartCases(t, "liveness-restart-in-window", []restartCase{
		{name: "one restart in window", run: base().Inject(10*s, "stall", "a").Restart(22*s, "a", timeline.CauseLiveness),
			want: verdict.Pass},
		{name: "restarted again after the window",
			run:  base().Inject(10*s, "stall", "a").Restart(22*s, "a", timeline.CauseLiveness).Ready(26*s, "a").Restart(38*s, "a", timeline.CauseLiveness),
			want: verdict.Fail, at: 38 * s, evidence: "a restarted by liveness again (#2)"},
	})
}
