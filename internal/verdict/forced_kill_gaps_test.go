package verdict_test

import (
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// Audit N8: no-forced-kill is gated by watch gaps, a pod's deleted mark (a relist's tombstone
// above all) is no evidence of a clean exit, and with expected=true an exit never observed is no
// forced kill. Each paper timeline here passed before.
func TestNoForcedKillWatchGaps(t *testing.T) {
	// The short-grace variant: deleted at 10 s with 3 s grace, SIGKILLed at 13 s, removed at 13.5 s;
	// the pods watch breaks at 12 s and its relist delivers the tombstone at 13.8 s (≤ 10 + 3 + 1 s).
	shortGrace := func() *vt.Builder {
		return base().Inject(10*s, "pod-delete", "a").Deleting(10*s, "a", 3*s).Terminating(ms(10050), "a")
	}
	cases := []struct {
		name     string
		params   map[string]string
		run      *vt.Builder
		want     verdict.Status
		unshown  []string
		observed string
	}{
		{name: "SIGKILL inside a pods watch gap", want: verdict.Inconclusive,
			run: shortGrace().WatchGap(12*s, "pods watch ended; relisting").Removed(ms(13500), "a").Deleted(ms(13800), "a").Recovered(),
			unshown: []string{"a watch gap at 12s–13.8s (pods watch ended; relisting)",
				"a: its exit is known only from the relist's tombstone at 13.8s"}},
		{name: "exit known only from the deleted mark", want: verdict.Inconclusive,
			run:     shortGrace().Removed(ms(13500), "a").Deleted(ms(13800), "a"),
			unshown: []string{"a: no container exit was seen, only the pod's deletion at 13.8s"}},
		// drain-exceeds-grace: the run stopped watching before a's exit.
		{name: "expected forced kill, exit never observed", params: map[string]string{"expected": "true"}, want: verdict.Inconclusive,
			run:     shortGrace(),
			unshown: []string{"a: its exit was never observed"}, observed: "0 of 1 deleted pods force-killed"},
		// Controls: a forced kill seen stays FAIL (or PASS when expected), a clean exit seen PASSes.
		{name: "SIGKILL seen", want: verdict.Fail, observed: "exit code 137",
			run: shortGrace().Exited(13*s, "a", 137).Removed(ms(13500), "a").Deleted(ms(13800), "a")},
		{name: "expected forced kill, seen", params: map[string]string{"expected": "true"}, want: verdict.Pass,
			run: shortGrace().Exited(13*s, "a", 137)},
		{name: "clean exit seen", want: verdict.Pass, observed: "a exited after 2s",
			run: shortGrace().Exited(12*s, "a", 0).Removed(ms(12500), "a").Deleted(ms(12800), "a")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := verdict.Evaluate(c.run.Input(), verdict.Spec{Rule: "no-forced-kill", Params: c.params})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.want {
				t.Fatalf("%s, want %s: %s (unshown %q)", res.Status, c.want, res.Observed, res.Unshown)
			}
			for _, u := range c.unshown {
				if !hasUnshown(res, u) {
					t.Errorf("no unshown line with %q: %q", u, res.Unshown)
				}
			}
			if c.observed != "" && !strings.Contains(res.Observed, c.observed) {
				t.Errorf("observed %q, want it to contain %q", res.Observed, c.observed)
			}
		})
	}
}
