package verdict_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// randomRun builds an arbitrary but well-formed run: pods appearing, flapping, being deleted and
// restarted, faults injected and reverted (or not), and requests of every outcome.
func randomRun(rng *rand.Rand) *vt.Builder {
	b := vt.New()
	pods := []string{"a", "b", "c", "d"}
	at := func() time.Duration { return time.Duration(rng.IntN(60_000)) * time.Millisecond }
	for i := 0; i < rng.IntN(40); i++ {
		p := pods[rng.IntN(len(pods))]
		t := at()
		switch rng.IntN(12) {
		case 0:
			b.Ready(t, p)
		case 1:
			b.NotReady(t, p)
		case 2:
			b.Terminating(t, p)
		case 3:
			b.Removed(t, p)
		case 4:
			b.Deleting(t, p, time.Duration(rng.IntN(30))*time.Second)
		case 5:
			b.Exited(t, p, []int32{0, 1, 137, 143}[rng.IntN(4)])
		case 6:
			b.Restart(t, p, []timeline.RestartCause{timeline.CauseLiveness, timeline.CauseStartup, timeline.CauseOOM, timeline.CauseDeletion}[rng.IntN(4)])
		case 7:
			b.Inject(t, []string{"stall", "db-down", "pod-delete"}[rng.IntN(3)], []string{"", p}[rng.IntN(2)])
		case 8:
			b.Revert(t, []string{"stall", "db-down"}[rng.IntN(2)], "")
		case 9:
			b.Created(t, p).ContainerReady(t+time.Duration(rng.IntN(5000))*time.Millisecond, p)
		case 10:
			b.Skip(t, "freeze", "no admin endpoint")
		case 11:
			b.Deleted(t, p)
		}
	}
	if rng.IntN(4) > 0 {
		from := at()
		b.Traffic(from, from+time.Duration(rng.IntN(20_000))*time.Millisecond, 1+rng.IntN(50))
	}
	for i := 0; i < rng.IntN(30); i++ {
		class := []timeline.ErrorClass{"", timeline.ErrRefused, timeline.ErrReset, timeline.ErrTimeout, timeline.ErrHTTP5xx}[rng.IntN(5)]
		status := 200
		if class == timeline.ErrHTTP5xx {
			status = 503
		} else if class != "" {
			status = 0
		}
		b.Request(at(), []string{"", "a", "b", "c"}[rng.IntN(4)], status, class, rng.IntN(2) == 0)
	}
	return b
}

// TestRulesOnArbitraryRuns: no rule panics, every result is well formed and JSON-encodable (no NaN
// or infinite figures), and every FAIL says when.
func TestRulesOnArbitraryRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	runs := []verdict.Input{{}, vt.New().Input()}
	for i := 0; i < 300; i++ {
		runs = append(runs, randomRun(rng).Input())
	}
	for i, in := range runs {
		for _, name := range verdict.Names() {
			res, err := func() (res verdict.Result, err error) {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panic: %v", p)
					}
				}()
				return verdict.Evaluate(in, verdict.Spec{Rule: name})
			}()
			if err != nil {
				t.Fatalf("run %d, rule %s: %v", i, name, err)
			}
			switch res.Status {
			case verdict.Pass, verdict.Inconclusive:
				if res.At != nil {
					t.Errorf("run %d, rule %s: %s with At", i, name, res.Status)
				}
			case verdict.Fail:
				if res.At == nil {
					t.Errorf("run %d, rule %s: FAIL without At: %s", i, name, res.Observed)
				}
			default:
				t.Errorf("run %d, rule %s: status %q", i, name, res.Status)
			}
			if res.Expected == "" || res.Observed == "" {
				t.Errorf("run %d, rule %s: empty expected/observed", i, name)
			}
			if _, err := json.Marshal(res); err != nil {
				t.Errorf("run %d, rule %s: %v", i, name, err)
			}
		}
	}
}
