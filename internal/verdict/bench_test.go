package verdict_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/benchfig"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// BenchmarkJudgeEveryRule judges every rule on a 10-minute run at 200 req/s (120,000 requests) over
// three pods with a fault, a withdrawal, a pod deletion and scattered failures, the way the runner
// does (the runner's verdictJudge: one Evaluate per expected rule, requests in completion order): the
// verdict step of the longest scenario must stay well under a second.
func BenchmarkJudgeEveryRule(b *testing.B) {
	run := vt.New()
	for _, p := range []string{"a", "b", "c"} {
		run.Created(0, p).ContainerReady(500*time.Millisecond, p)
	}
	run.Ready(time.Second, "a", "b", "c").Traffic(time.Second, 601*time.Second, 200).
		Inject(100*time.Second, "db-latency", "b").NotReady(103*time.Second, "b").
		Revert(200*time.Second, "db-latency", "b").Ready(202*time.Second, "b").
		Inject(300*time.Second, "pod-delete", "a").Deleting(300*time.Second, "a", 10*time.Second).
		Terminating(301*time.Second, "a").Exited(303*time.Second, "a", 0).Removed(303*time.Second, "a").
		Created(301*time.Second, "d").ContainerReady(304*time.Second, "d").Ready(305*time.Second, "d")
	for t := 10 * time.Second; t < 600*time.Second; t += 7 * time.Second {
		run.Request(t, "c", 503, timeline.ErrHTTP5xx, false)
	}
	in := run.Input()
	// The load generator writes requests in completion order: judge them unsorted.
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(in.Requests), func(i, j int) { in.Requests[i], in.Requests[j] = in.Requests[j], in.Requests[i] })
	var specs []verdict.Spec
	for _, name := range verdict.Names() {
		specs = append(specs, verdict.Spec{Rule: name})
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for _, spec := range specs {
			if _, err := verdict.Evaluate(in, spec); err != nil {
				b.Fatal(err)
			}
		}
	}
	perRun := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(perRun.Milliseconds()), "ms/judgement")
	benchfig.Print("verdict_evaluate_all_120k_requests", float64(perRun.Milliseconds()), "ms", "<=500")
}
