package verdict_test

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// A StatefulSet's rolling update takes a pod out before its replacement starts (no surge): with
// rollout-floor the floor is what the workload declares, not the Deployment's replicas.
func TestMinReadyEndpointsRolloutFloor(t *testing.T) {
	const s = time.Second
	workload := func(kind string, replicas, unavailable int) timeline.Entry {
		return timeline.Entry{Kind: timeline.KindWorkload, Workload: &timeline.WorkloadSpec{Kind: kind, Name: "web",
			Replicas: &replicas, RolloutUnavailable: &unavailable}}
	}
	// web-1 replaced by its second incarnation: one endpoint for 10 s.
	dip := func(w *timeline.Entry) *vt.Builder {
		b := vt.New()
		if w != nil {
			b.Entry(*w)
		}
		second := timeline.Incarnation("web-1", 2)
		return b.Ready(1*s, "web-0", "web-1").Traffic(2*s, 40*s, 10).
			NotReady(10*s, "web-1").Removed(12*s, "web-1").Ready(20*s, second)
	}
	sts, dep := workload("StatefulSet", 2, 1), workload("Deployment", 2, 0)
	for _, c := range []struct {
		name   string
		run    *vt.Builder
		params map[string]string
		want   verdict.Status
		words  string
	}{
		{"statefulset, floor from its strategy", dip(&sts), map[string]string{"min": "2", "rollout-floor": "true"}, verdict.Pass, "rolls with maxUnavailable 1 of 2"},
		{"statefulset, no floor asked", dip(&sts), map[string]string{"min": "2"}, verdict.Fail, "≥ 2"},
		{"deployment with maxUnavailable 0 keeps min", dip(&dep), map[string]string{"min": "2", "rollout-floor": "true"}, verdict.Fail, "≥ 2"},
		{"workload unknown keeps min", dip(nil), map[string]string{"min": "2", "rollout-floor": "true"}, verdict.Fail, "not known: min kept"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := verdict.Evaluate(c.run.Input(), verdict.Spec{Rule: "min-ready-endpoints", Params: c.params})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.want || !strings.Contains(res.Expected, c.words) {
				t.Fatalf("status %s, expected %q; want %s and %q (observed %q)", res.Status, res.Expected, c.want, c.words, res.Observed)
			}
		})
	}
}
