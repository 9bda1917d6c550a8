package verdict_test

import (
	"fmt"
	"time"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/internal/verdict/verdicttest"
)

func ExampleEvaluate() {
	// Three pods under load; pod a stalls at 10 s and its endpoint goes ready=false at 16.5 s,
	// later than the readiness window of the bundled target's probes allows.
	in := verdicttest.New().
		Ready(0, "a", "b", "c").
		Traffic(time.Second, 30*time.Second, 20).
		Inject(10*time.Second, "stall", "a").
		NotReady(16500*time.Millisecond, "a").
		Input()
	res, err := verdict.Evaluate(in, verdict.Spec{Rule: "readiness-withdrawn-in-window"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, "at", *res.At)
	fmt.Println(res.Observed)
	for _, ev := range res.Evidence {
		fmt.Printf("seq %d at %s: %s\n", ev.Seq, ev.T, ev.Note)
	}
	// Output:
	// FAIL at 15s
	// a withdrawn after 6.5s; stall: 0 of 1 target pods withdrawn in window (need 1)
	// seq 6 at 16.5s: a withdrawn 6.5s after the fault: LATE (deadline 5s)
}
