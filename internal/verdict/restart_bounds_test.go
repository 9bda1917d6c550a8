package verdict_test

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// restartCase is a hand-built run that PASSed the rule before its restarts were bounded (audit N1,
// N9, N15) and must now FAIL at at, with evidence mentioning evidence; or PASS when want says so.
type restartCase struct {
	name     string
	params   map[string]string
	run      *vt.Builder
	want     verdict.Status
	at       time.Duration
	evidence string
}

func judgeRestartCases(t *testing.T, rule string, cases []restartCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := verdict.Evaluate(c.run.Input(), verdict.Spec{Rule: rule, Params: c.params})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s", res.Status, c.want, res.Observed)
			}
			if c.want == verdict.Fail && (res.At == nil || *res.At != c.at) {
				t.Errorf("At = %v, want %s", res.At, c.at)
			}
			if c.evidence == "" {
				return
			}
			var notes []string
			for _, e := range res.Evidence {
				notes = append(notes, e.Note)
			}
			if !strings.Contains(strings.Join(notes, "\n"), c.evidence) {
				t.Errorf("no evidence mentions %q:\n%s", c.evidence, strings.Join(notes, "\n"))
			}
		})
	}
}

// Audit N1: a freeze or stall explained every later liveness restart of its pod, at any time. The
// default oracle's liveness restart window ends 17 s after the fault starts.
func TestLivenessRestartsExplainedOncePerFault(t *testing.T) {
	judgeRestartCases(t, "no-unexpected-restarts", []restartCase{
		{name: "the one restart the freeze brings about", run: base().Inject(10*s, "freeze", "a").Restart(25*s, "a", timeline.CauseLiveness),
			want: verdict.Pass, evidence: "explained by freeze"},
		{name: "a restart loop after the freeze",
			run:  base().Inject(10*s, "freeze", "a").Restart(25*s, "a", timeline.CauseLiveness).Ready(30*s, "a").Restart(38*s, "a", timeline.CauseLiveness),
			want: verdict.Fail, at: 38 * s, evidence: "a container app restarted (#2), cause liveness, that no fault explains"},
		{name: "a restart after the window of a reverted stall",
			run:  base().Inject(10*s, "stall", "a").Revert(15*s, "stall", "a").Restart(35*s, "a", timeline.CauseLiveness),
			want: verdict.Fail, at: 35 * s, evidence: "(#1), cause liveness, that no fault explains"},
		{name: "a restart within the window after the revert",
			run:  base().Inject(10*s, "stall", "a").Revert(15*s, "stall", "a").Restart(30*s, "a", timeline.CauseLiveness),
			want: verdict.Pass},
		{name: "two freezes, one restart each",
			run: base().Inject(5*s, "freeze", "a").Revert(6*s, "freeze", "a").Restart(15*s, "a", timeline.CauseLiveness).
				Inject(20*s, "freeze", "a").Restart(30*s, "a", timeline.CauseLiveness),
			want: verdict.Pass},
	})
}

// Audit N9: a deletion or an eviction was explained by any deleting fault, on any pod, at any
// later time. The default oracle's grace period is 10 s.
func TestDeletionsExplainedByTheirPodsFault(t *testing.T) {
	judgeRestartCases(t, "no-unexpected-restarts", []restartCase{
		{name: "the deleted pod", run: base().Inject(10*s, "pod-delete", "a").Restart(12*s, "a", timeline.CauseDeletion),
			want: verdict.Pass, evidence: "explained by pod-delete"},
		{name: "an eviction of another pod after a pod-delete",
			run:  base().Inject(10*s, "pod-delete", "a").Restart(12*s, "a", timeline.CauseDeletion).Restart(30*s, "b", timeline.CauseEviction),
			want: verdict.Fail, at: 30 * s, evidence: "b container app restarted (#1), cause eviction, that no fault explains"},
		{name: "a deletion of the pod long after its pod-delete",
			run:  base().Inject(10*s, "pod-delete", "a").Restart(60*s, "a", timeline.CauseDeletion),
			want: verdict.Fail, at: 60 * s},
		{name: "a node drain explains the pods it evicted, not others",
			run: base().Inject(10*s, "node-drain", "").Observe(11*s, "node-drain", "b", timeline.EffectConfirmed).
				Restart(14*s, "b", timeline.CauseEviction).Restart(15*s, "c", timeline.CauseEviction),
			want: verdict.Fail, at: 15 * s, evidence: "c container app restarted (#1), cause eviction"},
		{name: "a rollout explains the pods that predate it, not its own",
			run: base().Inject(10*s, "rolling-update", "").Created(12*s, "d").ContainerReady(14*s, "d").
				Restart(16*s, "a", timeline.CauseDeletion).Restart(30*s, "d", timeline.CauseDeletion),
			want: verdict.Fail, at: 30 * s, evidence: "d container app restarted (#1), cause deletion"},
		// A busy kubelet and watch deliver the end of the deleted pod (grace 25 s) 35 s after the
		// deletion, past grace + slack; its container finished 9.5 s after it: the deletion's doing.
		{name: "a deletion's end observed late, finished in time",
			run: base().Inject(10*s, "pod-delete", "a").Entry(timeline.Entry{T: 45 * s, Kind: timeline.KindRestart, Pod: "a",
				Restart: &timeline.ContainerRestart{Container: vt.Container, RestartCount: 1, Reason: "Completed", Cause: timeline.CauseDeletion,
					FinishedAt: ptrTime(vt.Start.Add(19500 * time.Millisecond))}}),
			want: verdict.Pass, evidence: "explained by pod-delete"},
		// Seen on the cluster: cold-start's proof names the new pod it watches boot; the old pods
		// its rollout deletes are named nowhere and still its doing.
		{name: "a cold start whose proof names its new pod explains the old pods it replaced",
			run: base().Inject(10*s, "cold-start", "").Created(11*s, "d").Observe(12*s, "cold-start", "d", timeline.EffectConfirmed).
				Restart(40*s, "a", timeline.CauseDeletion).Restart(70*s, "b", timeline.CauseDeletion).Revert(80*s, "cold-start", ""),
			want: verdict.Pass, evidence: "explained by cold-start"},
	})
}

func ptrTime(t time.Time) *time.Time { return &t }
