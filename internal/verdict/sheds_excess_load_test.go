package verdict_test

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
	vt "github.com/probegate/probegate/internal/verdict/verdicttest"
)

// overloadRun is an overload from 10 s to 30 s: 400 requests per second against a target whose
// capacity, as a capacity search measured it before the load, is 150 successful responses per
// second. serve says what the target does with the request numbered i of second sec: its status (0
// for a client timeout) and latency.
func overloadRun(serve func(sec, i int) (status int, latency time.Duration)) verdict.Input {
	b := vt.New().Capacity(0, 150, true)
	for _, p := range []string{"a", "b", "c"} {
		b.Created(0, p).ContainerReady(time.Second, p)
	}
	b.Ready(time.Second, "a", "b", "c").Inject(10*time.Second, "overload", "").Revert(30*time.Second, "overload", "")
	in := b.Input()
	var seq uint64
	for sec := 10; sec < 30; sec++ {
		for i := range 400 {
			status, lat := serve(sec-10, i)
			t := time.Duration(sec)*time.Second + time.Duration(i)*time.Second/400
			q := timeline.Request{Seq: seq, T: t, Latency: lat, Status: status, Pod: "a"}
			if status == 0 {
				q.Error = timeline.ErrTimeout
			} else if status >= 500 {
				q.Error = timeline.ErrHTTP5xx
			}
			seq++
			in.Requests = append(in.Requests, q)
		}
	}
	return in
}

func judgeShed(t *testing.T, in verdict.Input, params map[string]string) verdict.Result {
	t.Helper()
	res, err := verdict.Evaluate(in, verdict.Spec{Rule: "sheds-excess-load", Params: params})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestShedsExcessLoadPassesATargetThatSheds(t *testing.T) {
	// 150 admitted per second (200 ms each), the rest rejected in 2 ms.
	res := judgeShed(t, overloadRun(func(_, i int) (int, time.Duration) {
		if i%8 < 3 {
			return 200, 200 * time.Millisecond
		}
		return 503, 2 * time.Millisecond
	}), nil)
	if res.Status != verdict.Pass {
		t.Fatalf("status %s: %s %v", res.Status, res.Observed, res.Evidence)
	}
	if res.Figures["timeouts"] != 0 || res.Figures["goodput_ratio"] < 0.9 || res.Figures["capacity_rps"] < 140 {
		t.Errorf("figures %v", res.Figures)
	}
}

func TestShedsExcessLoadFailsAQueueThatCollapses(t *testing.T) {
	// Queue-only: the first 3 s are served ever more slowly, then every request waits past the
	// client's 5 s timeout.
	res := judgeShed(t, overloadRun(func(sec, i int) (int, time.Duration) {
		if sec < 3 && i%8 < 3 {
			return 200, time.Duration(sec+1) * time.Second
		}
		return 0, 5 * time.Second
	}), nil)
	if res.Status != verdict.Fail {
		t.Fatalf("status %s: %s", res.Status, res.Observed)
	}
	var collapsed, timedOut bool
	for _, ev := range res.Evidence {
		collapsed = collapsed || strings.Contains(ev.Note, "goodput collapsed")
		timedOut = timedOut || strings.Contains(ev.Note, "timed out at the client")
	}
	if !collapsed || !timedOut {
		t.Errorf("evidence must show the collapse and the timeouts: %+v", res.Evidence)
	}
}

func TestShedsExcessLoadFailsTimeoutsEvenWithGoodputHeld(t *testing.T) {
	// Goodput holds, but 5 % of the requests still wait out the client instead of being rejected.
	res := judgeShed(t, overloadRun(func(_, i int) (int, time.Duration) {
		switch {
		case i%8 < 3:
			return 200, 200 * time.Millisecond
		case i%20 == 19:
			return 0, 5 * time.Second
		}
		return 503, 2 * time.Millisecond
	}), nil)
	if res.Status != verdict.Fail || res.Figures["goodput_ratio"] < 0.9 {
		t.Fatalf("status %s, figures %v: %s", res.Status, res.Figures, res.Observed)
	}
	// A stated tolerance admits them.
	if res := judgeShed(t, overloadRun(func(_, i int) (int, time.Duration) {
		if i%8 < 3 {
			return 200, 200 * time.Millisecond
		}
		if i%20 == 19 {
			return 0, 5 * time.Second
		}
		return 503, 2 * time.Millisecond
	}), map[string]string{"max-timeouts": "0.06"}); res.Status != verdict.Pass {
		t.Errorf("max-timeouts 0.06: status %s: %s", res.Status, res.Observed)
	}
}

func TestShedsExcessLoadWithoutAFaultHasNothingToJudge(t *testing.T) {
	in := vt.New().Input()
	if res := judgeShed(t, in, nil); res.Status != verdict.Inconclusive {
		t.Fatalf("no fault: status %s", res.Status)
	}
}

func TestResultsListTheirTolerances(t *testing.T) {
	in := overloadRun(func(_, i int) (int, time.Duration) {
		if i%8 < 3 {
			return 200, 200 * time.Millisecond
		}
		return 503, 2 * time.Millisecond
	})
	res, err := verdict.Evaluate(in, verdict.Spec{Rule: "sheds-excess-load", Params: map[string]string{"goodput": "0.6"}, Tolerance: "a slow CI node"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"goodput=0.6: a slow CI node", "max-timeouts=0.01 (rule default): "}
	if len(res.Tolerances) != 2 || res.Tolerances[0] != want[0] || !strings.HasPrefix(res.Tolerances[1], want[1]) {
		t.Fatalf("tolerances %q, want %q…", res.Tolerances, want)
	}
	for params, want := range map[string]string{"2s": "grace", "0s": "", "0": "", "1": "grace"} {
		got := strings.Join(verdict.TolerancesSet("min-ready-endpoints", map[string]string{"min": "2", "grace": params}), ",")
		if got != want {
			t.Errorf("min-ready-endpoints grace=%s: tolerances set %q, want %q", params, got, want)
		}
	}
	if got := verdict.TolerancesSet("sheds-excess-load", map[string]string{"max-timeouts": "0.01"}); len(got) != 1 {
		t.Errorf("max-timeouts=0.01 is a non-zero tolerance: %v", got)
	}
}

// collapseRun is the audit's uniform collapse (N7): under an overload of 90/s from 10 s to 30 s a
// target of about 45/s serves a steady 2/s and answers everything else with an immediate 503.
// Judged only against its own seconds of the fault, 2/s looks like 100 % of its capacity. With
// prefault the load ran at 30/s from 1 s, every request OK at once, before the overload.
func collapseRun(prefault bool) *vt.Builder {
	b := vt.New()
	for _, p := range []string{"a", "b", "c"} {
		b.Created(0, p).ContainerReady(time.Second, p)
	}
	b.Ready(time.Second, "a", "b", "c").Inject(10*time.Second, "overload", "").Revert(30*time.Second, "overload", "")
	if prefault {
		for i := range 270 {
			b.OK(time.Second+time.Duration(i)*time.Second/30, "a")
		}
	}
	for sec := 10; sec < 30; sec++ {
		for i := range 90 {
			t := time.Duration(sec)*time.Second + time.Duration(i)*time.Second/90
			if i%45 == 0 {
				b.OK(t, "a").Took(200 * time.Millisecond)
			} else {
				b.Request(t, "a", 503, timeline.ErrHTTP5xx, false).Took(2 * time.Millisecond)
			}
		}
	}
	return b
}

// TestShedsExcessLoadFailsAUniformCollapse (N7): capacity is measured outside the fault, by the
// capacity search when the run has one, else from the load before the fault.
func TestShedsExcessLoadFailsAUniformCollapse(t *testing.T) {
	for _, c := range []struct {
		name     string
		run      *vt.Builder
		figure   string
		capacity float64
		basis    string
	}{
		{"capacity search", collapseRun(true).Capacity(0, 45, true), "capacity_search_rps", 45, "capacity search"},
		{"pre-fault load", collapseRun(true), "prefault_peak_rps", 30, "before the fault"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := judgeShed(t, c.run.Input(), nil)
			if res.Status != verdict.Fail {
				t.Fatalf("status %s: %s %v %v", res.Status, res.Observed, res.Figures, res.Unshown)
			}
			if res.Figures[c.figure] != c.capacity || res.Figures["capacity_rps"] != c.capacity || res.Figures["fault_peak_rps"] != 2 {
				t.Errorf("figures %v, want %s = capacity_rps = %g", res.Figures, c.figure, c.capacity)
			}
			if !strings.Contains(res.Observed, c.basis) {
				t.Errorf("observed %q does not say the capacity came from the %s", res.Observed, c.basis)
			}
		})
	}
	// Neither: the goodput cannot be judged against anything measured outside the fault.
	res := judgeShed(t, collapseRun(false).Input(), nil)
	if res.Status != verdict.Inconclusive || !strings.Contains(strings.Join(res.Unshown, "\n"), "no capacity search ran") {
		t.Fatalf("no capacity: status %s (%s), unshown %q", res.Status, res.Observed, res.Unshown)
	}
}

// The load's seconds before the overload count only after an earlier fault has ended: a pod
// deletion at 8 s leaves 2 s, too few for a capacity.
func TestShedsExcessLoadPreFaultWindowStartsAfterAnEarlierFault(t *testing.T) {
	res := judgeShed(t, collapseRun(true).Inject(5*time.Second, "pod-delete", "b").Revert(8*time.Second, "pod-delete", "b").Input(),
		map[string]string{"fault": "overload"})
	if res.Status != verdict.Inconclusive || !strings.Contains(strings.Join(res.Unshown, "\n"), "the load ran 2s before the fault outside other faults") {
		t.Fatalf("status %s (%s), unshown %q", res.Status, res.Observed, res.Unshown)
	}
}
