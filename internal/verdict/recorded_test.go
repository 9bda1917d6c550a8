package verdict_test

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/probegate/probegate/fixtures/manifests"
	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// recorded loads a run recorded by `probegate run` on the kind cluster (testdata/<name>.*.jsonl.gz),
// with the load span from its load-start/load-end marks and the oracle of the bundled good target.
func recorded(t *testing.T, name string, opts oracle.Options) verdict.Input {
	t.Helper()
	tl, reqs := vt.Recorded(t, "testdata", name)
	in := verdict.Input{Entries: tl.Entries(), Requests: reqs, Oracle: goodOracle(t, opts)}
	for _, e := range in.Entries {
		if e.Kind == timeline.KindMark && e.Mark.Name == "load-start" {
			in.Load.Start = e.T
		}
		if e.Kind == timeline.KindMark && e.Mark.Name == "load-end" {
			in.Load.End = e.T
		}
	}
	if in.Load.End == 0 {
		t.Fatal("recording has no load-end mark")
	}
	return in
}

func goodOracle(t *testing.T, opts oracle.Options) oracle.Oracle {
	t.Helper()
	objs, err := manifests.Objects("good")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok {
			or, err := oracle.ForTemplate(d.Spec.Template, opts)
			if err != nil {
				t.Fatal(err)
			}
			return or
		}
	}
	t.Fatal("good manifest has no Deployment")
	return oracle.Oracle{}
}

type recordedCase struct {
	rule    string
	params  map[string]string
	opts    oracle.Options
	want    verdict.Status
	figures map[string]float64
}

func judgeRecorded(t *testing.T, name string, cases []recordedCase) {
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			res, err := verdict.Evaluate(recorded(t, name, tc.opts), verdict.Spec{Rule: tc.rule, Params: tc.params})
			if err != nil {
				t.Fatal(err)
			}
			dump, _ := json.MarshalIndent(res, "", "  ")
			if res.Status != tc.want {
				t.Fatalf("status %s, want %s\n%s", res.Status, tc.want, dump)
			}
			for k, v := range tc.figures {
				if got := res.Figures[k]; got < v-0.01 || got > v+0.01 {
					t.Errorf("figure %s = %v, want %v\n%s", k, got, v, dump)
				}
			}
			t.Logf("%s: %s", res.Status, res.Observed)
		})
	}
}

// TestRecordedDBSlowness judges a db-slowness run of the good target recorded on a heavily loaded
// machine (load average ~25 on 2 cores): the database answered 2 s late from 34.4 s to 59.4 s.
func TestRecordedDBSlowness(t *testing.T) {
	judgeRecorded(t, "db-slowness", []recordedCase{
		{rule: "no-liveness-restarts", want: verdict.Pass, figures: map[string]float64{"liveness_restarts": 0}},
		// Withdrawn 3.58 s, 5.13 s and 5.79 s after the fault; the first readiness probe failures came
		// 1.2 s after it, the app's own dependency-check lag. Without that lag (overridden to 1 ns here,
		// since the manifest now declares it) the 5 s deadline fails…
		{rule: "readiness-withdrawn-in-window", opts: oracle.Options{ReadinessLag: 1}, want: verdict.Fail, figures: map[string]float64{"withdrawn_after_s": 5.789}},
		// …and with it stated (readiness-lag 1.5 s → deadline 6.5 s) the same run passes…
		{rule: "readiness-withdrawn-in-window", opts: oracle.Options{ReadinessLag: 1500 * 1e6}, want: verdict.Pass},
		// …as it does with the lag the good manifest declares (2.1 s → deadline 7.1 s).
		{rule: "readiness-withdrawn-in-window", want: verdict.Pass},
		// The shared outage withdrew every backend (from 40.19 s to 60.12 s).
		{rule: "min-ready-endpoints", want: verdict.Fail, figures: map[string]float64{"min_ready": 0}},
		// All three ready again 1.88 s after the revert; the loaded machine withdrew one again later.
		{rule: "recovery-within", params: map[string]string{"fault": "db-latency"}, want: verdict.Pass,
			figures: map[string]float64{"recovery_s": 1.879, "later_dips": 1}},
	})
}

// TestRecordedPodDelete judges a pod-delete-under-load run of the good target recorded on the same
// loaded machine: the pods had just been withdrawn by a slow database when one was deleted.
func TestRecordedPodDelete(t *testing.T) {
	judgeRecorded(t, "pod-delete-under-load", []recordedCase{
		{rule: "terminating-before-exit", want: verdict.Pass, figures: map[string]float64{"deleted_pods": 1}},
		{rule: "no-forced-kill", want: verdict.Pass, figures: map[string]float64{"forced_kills": 0, "longest_exit_s": 10.836}},
		{rule: "no-forced-kill", params: map[string]string{"expected": "true"}, want: verdict.Fail},
		{rule: "failed-requests-budget", params: map[string]string{"max": "0"}, want: verdict.Fail,
			figures: map[string]float64{"failed": 9, "failed_during_termination": 8, "failed_other": 1}},
		{rule: "recovery-within", params: map[string]string{"fault": "pod-delete"}, want: verdict.Pass,
			figures: map[string]float64{"recovery_s": 15.747}},
		{rule: "no-traffic-after-withdrawal", want: verdict.Pass, figures: map[string]float64{"after_withdrawal": 0}},
		{rule: "no-liveness-restarts", want: verdict.Pass},
	})
}
