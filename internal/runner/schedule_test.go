package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
)

// journal records fault calls in order, with the fake clock's offset.
type journal struct {
	mu    sync.Mutex
	calls []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	j.calls = append(j.calls, s)
	j.mu.Unlock()
}

func (j *journal) String() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return strings.Join(j.calls, " ")
}

type fakeInjector struct {
	name      string
	j         *journal
	clock     *fakeClock
	injectErr error
	panicOn   string
}

func (f *fakeInjector) Type() string { return f.name }

func (f *fakeInjector) Inject(context.Context) error {
	if f.panicOn == "inject" {
		panic("boom")
	}
	f.j.add(fmt.Sprintf("+%s@%s", f.name, f.clock.elapsed()))
	return f.injectErr
}

func (f *fakeInjector) Revert(context.Context) error {
	f.j.add(fmt.Sprintf("-%s@%s", f.name, f.clock.elapsed()))
	return nil
}

// fakeClock advances only when the schedule sleeps; an optional hook runs at a given offset.
type fakeClock struct {
	mu    sync.Mutex
	start time.Time
	now   time.Time
	// cancelAt cancels the context once the clock reaches it.
	cancelAt time.Duration
	cancel   context.CancelFunc
}

func newFakeClock() *fakeClock {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &fakeClock{start: t, now: t}
}

func (c *fakeClock) elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now.Sub(c.start)
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	if c.cancel != nil && c.now.Sub(c.start)+d >= c.cancelAt {
		c.now = c.start.Add(c.cancelAt)
		c.mu.Unlock()
		c.cancel()
		return ctx.Err()
	}
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

func plan(clock *fakeClock, j *journal, specs ...scenario.Fault) []*plannedFault {
	var out []*plannedFault
	for i, s := range specs {
		out = append(out, &plannedFault{Index: i, Spec: s,
			Inj: &fakeInjector{name: fmt.Sprintf("%s%d", s.Type, i), j: j, clock: clock}})
	}
	return out
}

func newTestSchedule(faults []*plannedFault, clock *fakeClock) (*schedule, *timeline.Timeline) {
	tl := timeline.New(time.Now())
	s := newSchedule(faults, tl, nil)
	s.now, s.sleep = clock.Now, clock.sleep
	return s, tl
}

func TestScheduleOrderAndOffsets(t *testing.T) {
	clock, j := newFakeClock(), &journal{}
	faults := plan(clock, j,
		scenario.Fault{Type: "b", At: 20 * time.Second, Duration: 5 * time.Second},
		scenario.Fault{Type: "a", At: 10 * time.Second, Duration: 10 * time.Second},
		scenario.Fault{Type: "del", At: 12 * time.Second},
	)
	s, _ := newTestSchedule(faults, clock)
	if err := s.Run(context.Background(), clock.start); err != nil {
		t.Fatal(err)
	}
	// a is reverted at 20s before b is injected at 20s; the one-shot del is not reverted yet.
	want := "+a1@10s +del2@12s -a1@20s +b0@20s -b0@25s"
	if got := j.String(); got != want {
		t.Fatalf("calls\n got: %s\nwant: %s", got, want)
	}
	if err := s.RevertAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := j.String(); got != want+" -del2@25s" {
		t.Fatalf("after RevertAll: %s", got)
	}
	// Idempotent: a second RevertAll reverts nothing.
	_ = s.RevertAll(context.Background())
	if got := j.String(); got != want+" -del2@25s" {
		t.Fatalf("second RevertAll reverted again: %s", got)
	}
}

func TestScheduleCancelRevertsActiveFaults(t *testing.T) {
	clock, j := newFakeClock(), &journal{}
	faults := plan(clock, j,
		scenario.Fault{Type: "lat", At: 5 * time.Second, Duration: 30 * time.Second},
		scenario.Fault{Type: "late", At: 40 * time.Second, Duration: 5 * time.Second},
	)
	ctx, cancel := context.WithCancel(context.Background())
	clock.cancelAt, clock.cancel = 12*time.Second, cancel // Ctrl-C at 12 s
	s, tl := newTestSchedule(faults, clock)
	if err := s.Run(ctx, clock.start); err != nil {
		t.Fatal(err)
	}
	if got := s.Active(); len(got) != 1 || got[0] != "lat" {
		t.Fatalf("active after cancel = %v", got)
	}
	if err := s.RevertAll(ctx); err != nil { // ctx is cancelled: RevertAll must still work
		t.Fatal(err)
	}
	if got, want := j.String(), "+lat0@5s -lat0@12s"; got != want {
		t.Fatalf("calls\n got: %s\nwant: %s", got, want)
	}
	// The late fault never ran, and says so: a fault the schedule never reached leaves a skip.
	wantSkip(t, tl, "faults[1]", "late", "not injected: the schedule was cancelled at 12s (context canceled), before its start at 40s")
}

// When the load ends before a fault's start, the fault is recorded as not reached, and a fault
// already injected is not.
func TestScheduleLoadEndRecordsUnreachedFaults(t *testing.T) {
	clock, j := newFakeClock(), &journal{}
	faults := plan(clock, j,
		scenario.Fault{Type: "db-down", At: 34 * time.Second, Duration: 3 * time.Second},
		scenario.Fault{Type: "db-down", At: 52 * time.Second, Duration: 3 * time.Second},
	)
	ctx, cancel := context.WithCancelCause(context.Background())
	clock.cancelAt, clock.cancel = 50*time.Second, func() { cancel(errLoadEnded) }
	s, tl := newTestSchedule(faults, clock)
	if err := s.Run(ctx, clock.start); err != nil {
		t.Fatal(err)
	}
	wantSkip(t, tl, "faults[1]", "db-down", "not reached: the load ended (the schedule stopped at 50s) before its start at 52s")
}

// wantSkip fails t unless the only fault entry on tl is a skip of name (of type typ) saying detail.
func wantSkip(t *testing.T, tl *timeline.Timeline, name, typ, detail string) {
	t.Helper()
	got := tl.Filter(timeline.KindFault)
	if len(got) != 1 {
		t.Fatalf("fault entries = %d, want 1 skip of %s", len(got), name)
	}
	f := got[0].Fault
	if f.Action != timeline.FaultSkip || f.Name != name || f.Type != typ || f.Detail != detail {
		t.Fatalf("fault entry = %+v\nwant a skip of %s (%s): %q", *f, name, typ, detail)
	}
}

func TestScheduleInjectErrorStillReverted(t *testing.T) {
	clock, j := newFakeClock(), &journal{}
	faults := plan(clock, j, scenario.Fault{Type: "x", At: time.Second, Duration: 10 * time.Second})
	faults[0].Inj.(*fakeInjector).injectErr = errors.New("toxiproxy said no")
	s, _ := newTestSchedule(faults, clock)
	err := s.Run(context.Background(), clock.start)
	if err == nil || !strings.Contains(err.Error(), "inject faults[0] x: toxiproxy said no") {
		t.Fatalf("err = %v", err)
	}
	_ = s.RevertAll(context.Background())
	if got, want := j.String(), "+x0@1s -x0@1s"; got != want {
		t.Fatalf("a half-applied fault was not reverted: %s", got)
	}
}

func TestSchedulePanicBecomesError(t *testing.T) {
	clock, j := newFakeClock(), &journal{}
	faults := plan(clock, j, scenario.Fault{Type: "p", At: time.Second, Duration: time.Second})
	faults[0].Inj.(*fakeInjector).panicOn = "inject"
	s, _ := newTestSchedule(faults, clock)
	err := s.Run(context.Background(), clock.start)
	if err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Fatalf("err = %v", err)
	}
	_ = s.RevertAll(context.Background())
	if got := j.String(); got != "-p0@1s" {
		t.Fatalf("the fault being injected when the panic hit was not reverted: %q", got)
	}
}

func TestScheduleRecordsSkips(t *testing.T) {
	clock := newFakeClock()
	faults := []*plannedFault{{Index: 0, Spec: scenario.Fault{Type: "stall", At: time.Second}, Skip: "target has no admin endpoint"}}
	s, tl := newTestSchedule(faults, clock)
	if err := s.Run(context.Background(), clock.start); err != nil {
		t.Fatal(err)
	}
	got := tl.Filter(timeline.KindFault)
	if len(got) != 1 || got[0].Fault.Action != timeline.FaultSkip || got[0].Fault.Detail != "target has no admin endpoint" || got[0].Fault.Type != "stall" {
		t.Fatalf("skip entries = %+v", got)
	}
}
