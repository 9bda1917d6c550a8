package faults

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// A container whose main process is an entrypoint wrapper (sh -c, tini, a supervisor) runs the
// app as its child: freezing only the main pid leaves the app serving while the fault "acts"
// (audit N10). The freeze stops every process of the container, its proof checks each, and the thaw
// resumes them all.
func TestFreezeStopsEveryProcessOfTheContainer(t *testing.T) {
	t.Run("node agent", func(t *testing.T) {
		n := newAgentNode(t, podNode("target-b")) // init 4343, its child 4344
		tl := timeline.New(time.Now())
		c := choice(frozenTarget(t), 0)
		c.Pod = "target-b"
		f := NewFreeze(Recorder{Timeline: tl, Name: "faults[0]"}, c, "", n.procs)
		if err := f.Inject(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := f.Revert(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(n.sent, "|"), "4343 stopped (signal)|4344 stopped (signal)|4344 continued|4343 continued"; got != want {
			t.Fatalf("signals %q, want %q (every process of the container, the main one first to stop and last to resume)", got, want)
		}
		assertFreezeProofs(t, tl, "4343=T (stopped),4344=T (stopped)", "4343=S (sleeping),4344=S (sleeping)")
	})
	t.Run("kind node", func(t *testing.T) {
		node := &fakeNode{state: map[string]string{}, children: map[string][]string{"4343": {"4344"}}}
		tl := timeline.New(time.Now())
		c := choice(fakeTarget(), 0)
		c.Pod = "target-b"
		f := NewFreeze(Recorder{Timeline: tl, Name: "faults[0]"}, c, "", ExecProcs(node.exec))
		if err := f.Inject(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st := node.state["4344"]; st != "T (stopped)" {
			t.Fatalf("the wrapper's child is %q while frozen; node commands %v", st, node.calls)
		}
		if err := f.Revert(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st := node.state["4344"]; st != "S (sleeping)" {
			t.Fatalf("the wrapper's child is %q after the thaw; node commands %v", st, node.calls)
		}
		assertFreezeProofs(t, tl, "4343=T (stopped),4344=T (stopped)", "4343=S (sleeping),4344=S (sleeping)")
	})
}

// A stop that reached the wrapper but not the app is no proof: the app runs on.
func TestFreezeProofNeedsEveryProcessStopped(t *testing.T) {
	node := &fakeNode{state: map[string]string{"4245": "S (sleeping)"}, children: map[string][]string{"4242": {"4245"}}}
	exec := func(ctx context.Context, on string, args ...string) ([]byte, error) {
		if len(args) == 3 && args[0] == "kill" && args[2] == "4245" { // sent, but never lands
			return nil, nil
		}
		return node.exec(ctx, on, args...)
	}
	tl := timeline.New(time.Now())
	c := choice(fakeTarget(), 0)
	c.Pod = "target-a"
	f := NewFreeze(Recorder{Timeline: tl}, c, "", ExecProcs(exec))
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer f.Revert(context.Background())
	acts := tl.Filter(timeline.KindFault)
	obs := acts[len(acts)-1].Fault
	if obs.Action != timeline.FaultObserve || obs.Params[timeline.ParamEffect] != timeline.EffectNotObserved ||
		!strings.Contains(obs.Detail, "4245 S (sleeping)") {
		t.Fatalf("observe = %+v", obs)
	}
}

// assertFreezeProofs checks the freeze's two proofs: every process stopped while frozen, every one
// running after the thaw.
func assertFreezeProofs(t *testing.T, tl *timeline.Timeline, during, after string) {
	t.Helper()
	var got []string
	for _, e := range tl.Filter(timeline.KindFault) {
		got = append(got, e.Fault.Action+"/"+e.Fault.Params["states"]+"/"+e.Fault.Params[timeline.ParamEffect])
	}
	want := "inject// observe/" + during + "/confirmed revert// observe/" + after + "/confirmed"
	if strings.Join(got, " ") != want {
		t.Fatalf("actions = %v\nwant %s", got, want)
	}
}

func TestTaskPIDs(t *testing.T) {
	out := []byte("PID      INFO\n4343     -\n4390     -\n")
	if pids, err := taskPIDs(out, "abc"); err != nil || len(pids) != 2 || pids[0] != 4343 || pids[1] != 4390 {
		t.Fatalf("taskPIDs = %v, %v", pids, err)
	}
	if _, err := taskPIDs([]byte("PID      INFO\n"), "abc"); !gone(err) {
		t.Fatalf("a task without processes: %v, want it gone", err)
	}
	if _, err := taskPIDs([]byte("PID INFO\nx -\n"), "abc"); err == nil || gone(err) {
		t.Fatalf("a malformed listing: %v", err)
	}
}

// The freeze is in force once its last SIGSTOP returned: the inject is stamped then, not after the
// listing that only confirms no process was forked meanwhile (on a busy host each exec into the
// node took up to ~0.7 s; stamped after the listing, CI's freeze read as "injected 2s late").
func TestFreezeStampsTheLastStop(t *testing.T) {
	node := &fakeNode{state: map[string]string{}, children: map[string][]string{}}
	const listing = 300 * time.Millisecond
	var stopped time.Time
	exec := func(ctx context.Context, on string, args ...string) ([]byte, error) {
		out, err := node.exec(ctx, on, args...)
		switch {
		case len(args) >= 2 && args[0] == "kill" && args[1] == "-STOP":
			stopped = time.Now()
		case len(args) >= 5 && args[0] == "ctr" && args[4] == "ps":
			time.Sleep(listing)
		}
		return out, err
	}
	tl := timeline.New(time.Now())
	c := choice(fakeTarget(), 0)
	c.Pod = "target-a"
	f := NewFreeze(Recorder{Timeline: tl, Name: "faults[0]"}, c, "", ExecProcs(exec))
	if err := f.Inject(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer f.Revert(context.Background())
	inject := tl.Filter(timeline.KindFault)[0]
	if inject.Fault.Action != timeline.FaultInject {
		t.Fatalf("first fault entry %+v, want the inject", inject.Fault)
	}
	if d := inject.At.Sub(stopped); d < 0 || d > listing/3 {
		t.Errorf("inject stamped %v after the SIGSTOP returned; want it stamped at the stop, not after the %v listing", d, listing)
	}
}
