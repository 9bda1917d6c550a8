package verdict_test

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// hasUnshown reports whether some Unshown line of r contains sub.
func hasUnshown(r verdict.Result, sub string) bool {
	for _, u := range r.Unshown {
		if strings.Contains(u, sub) {
			return true
		}
	}
	return false
}

// deleteUnderLoad is pod a deleted at 10 s (30 s grace) under base's load, its endpoint terminating
// 50 ms later.
func deleteUnderLoad() *vt.Builder {
	return base().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 30*s).Terminating(ms(10050), "a")
}

// Audit N6 and §1 (6): the lead must hold from the earliest possible exit (finishedAt), the kill
// time must be known, and the pod's deleted mark is not its exit. Each paper timeline here passed
// with the latest possible exit, the withdrawal in place of a dropped Killing event, or the
// deleted mark in place of an exit.
func TestTerminatingBeforeExitEarliestExit(t *testing.T) {
	checkLeads(t, []leadCase{
		// §1 (6): SIGTERM at 12.03 s, Killing event dropped, exit at 12.04 s (finishedAt 12 s),
		// seen at 13.4 s. The old lead was 13.0 − 10.05 = 2.95 s.
		{name: "Killing event dropped, exit at once", want: verdict.Inconclusive,
			run:     deleteUnderLoad().ExitedReported(ms(13400), ms(12040), "a", 0),
			unshown: []string{"no Killing event", "between 1.95s and 2.95s"}},
		// The kill is known (10.1 s); the exit lies in [12 s, 13 s): a lead of 1.9–2.9 s straddles 2 s.
		{name: "exit bounds straddle min-lead", want: verdict.Inconclusive,
			run:     deleteUnderLoad().Killing(ms(10100), "a").ExitedReported(ms(13400), ms(12040), "a", 0),
			unshown: []string{"between 1.9s and 2.9s"}},
		// No terminated state seen: only the pod's deleted mark at 13.5 s, later than the exit.
		{name: "exit known only from the deleted mark", want: verdict.Inconclusive,
			run:     deleteUnderLoad().Killing(ms(10100), "a").Removed(ms(13200), "a").Deleted(ms(13500), "a"),
			unshown: []string{"a: no container exit was seen, only the pod's deletion at 13.5s"}},
		// Controls: a latest lead already short FAILs; an earliest lead long enough PASSes.
		{name: "late SIGTERM, exit at once", want: verdict.Fail, evidence: "only 970ms after the kubelet began killing it",
			run: deleteUnderLoad().Killing(ms(12030), "a").ExitedReported(ms(13400), ms(12040), "a", 0)},
		{name: "short even from the withdrawal, Killing dropped", want: verdict.Fail, evidence: "after its withdrawal",
			run: deleteUnderLoad().ExitedReported(ms(10400), ms(10150), "a", 0)},
		// Seen on the cluster (#31's fixture): the Killing event arrived 1 ms before the deletion's
		// pod update (separate watches): it is the kill all the same.
		{name: "Killing event seen just before the deletion", want: verdict.Pass, evidence: "5.95s later",
			run: base().Inject(10*s, "pod-delete", "a").Killing(ms(9999), "a").Deleting(10*s, "a", 30*s).Terminating(ms(10050), "a").
				Removed(16*s, "a").ExitedReported(ms(16400), ms(16200), "a", 0)},
		{name: "waits for routing to stop", want: verdict.Pass, evidence: "a exited (container app, exit code 0, Completed) 5.9s later",
			run: deleteUnderLoad().Killing(ms(10100), "a").Removed(16*s, "a").ExitedReported(ms(16400), ms(16200), "a", 0)},
	})
}

// leadCase is a timeline terminating-before-exit judges: the status it must get, the unshown lines,
// evidence and expected bound its result must carry.
type leadCase struct {
	name     string
	run      *vt.Builder
	want     verdict.Status
	unshown  []string
	evidence string
	expected string
}

func checkLeads(t *testing.T, cases []leadCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := verdict.Evaluate(c.run.Input(), verdict.Spec{Rule: "terminating-before-exit"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.want {
				t.Fatalf("%s, want %s: %s (%s; unshown %q, evidence %+v)", res.Status, c.want, res.Observed, res.Expected, res.Unshown, res.Evidence)
			}
			for _, u := range c.unshown {
				if !hasUnshown(res, u) {
					t.Errorf("no unshown line with %q: %q", u, res.Unshown)
				}
			}
			if c.evidence != "" && !hasEvidence(res, c.evidence) {
				t.Errorf("no evidence with %q: %+v", c.evidence, res.Evidence)
			}
			if !strings.Contains(res.Expected, c.expected) {
				t.Errorf("expected %q, want it to contain %q", res.Expected, c.expected)
			}
		})
	}
}

// #28: through a front door that keeps its own record, the hop that goes on sending a withdrawn pod
// requests is the door's, and its measured lag is the lead the process must show when it is longer
// than the oracle's propagation (2 s here); a shorter one never lowers the bound.
func TestTerminatingBeforeExitDoorLag(t *testing.T) {
	// a is withdrawn at 10.05 s, killed at 10.1 s and exits at 13 s (seen 13.3 s): a 2.9–3.2 s lead.
	run := func(doorLast time.Duration, via bool) *vt.Builder {
		b := deleteUnderLoad().Killing(ms(10100), "a").Removed(ms(13500), "a").ExitedReported(ms(13300), 13*s, "a", 0)
		for _, at := range []time.Duration{9 * s, doorLast} {
			b.OK(at, "a")
			if via {
				b.Via("10.244.0.7:8080")
			}
		}
		return b
	}
	checkLeads(t, []leadCase{
		// The door sent a a request 3.35 s after its withdrawal (after its exit: a 502): a process
		// gone 3.2 s after the kill left requests the door still sent it.
		{name: "door slower than the lead", run: run(ms(13400), true), want: verdict.Fail,
			expected: "at least 3.35s (the front door's lag", evidence: "the front door may send it new requests for up to 3.35s"},
		// The same requests through kube-proxy (no door record): the oracle's 2 s holds.
		{name: "no door: the oracle's propagation", run: run(ms(13400), false), want: verdict.Pass,
			expected: "at least 2s (propagation)"},
		// A quick door (0.3 s) does not lower the 2 s bound.
		{name: "door quicker than propagation", run: run(ms(10350), true), want: verdict.Pass,
			expected: "the front door's own lag was at most 300ms"},
	})
}
