package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/pause"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
)

// revertTimeout bounds the revert of every fault still active at teardown.
const revertTimeout = 30 * time.Second

// plannedFault is one scenario fault with its instance, or the reason it is skipped.
type plannedFault struct {
	Index int
	Spec  scenario.Fault
	Inj   faults.Fault
	Skip  string

	injected bool
	reverted bool
	// unreached: the schedule ended before its inject step and recorded that as a skip.
	unreached bool
}

func (p *plannedFault) label() string {
	return faultName(p.Index) + " " + p.Spec.Type
}

// faultName names the scenario's i-th fault on the timeline, in every one of its actions.
func faultName(i int) string { return fmt.Sprintf("faults[%d]", i) }

// errLoadEnded is the cause with which the schedule is stopped when the load has ended.
var errLoadEnded = errors.New("the load ended")

// schedule injects each fault at its offset from the load's start and reverts it when its duration
// has passed. Whatever happens (the context is cancelled, a fault fails, a panic unwinds the
// runner), RevertAll reverts every fault that was injected and not yet reverted.
type schedule struct {
	mu     sync.Mutex
	faults []*plannedFault
	tl     *timeline.Timeline
	log    *slog.Logger
	// now and sleep are the clock; tests replace them.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

// newSchedule plans faults on tl.
func newSchedule(faults []*plannedFault, tl *timeline.Timeline, log *slog.Logger) *schedule {
	if log == nil {
		log = slog.Default()
	}
	return &schedule{faults: faults, tl: tl, log: log, now: time.Now, sleep: pause.For}
}

// step is one action at one offset.
type step struct {
	at     time.Duration
	fault  *plannedFault
	revert bool
}

// steps orders every inject and revert by offset; at equal offsets reverts come first, then
// injects in file order.
func (s *schedule) steps() []step {
	var out []step
	for _, f := range s.faults {
		if f.Inj == nil {
			continue
		}
		out = append(out, step{at: f.Spec.At, fault: f})
		if f.Spec.Duration > 0 {
			out = append(out, step{at: f.Spec.End(), fault: f, revert: true})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].at != out[j].at {
			return out[i].at < out[j].at
		}
		return out[i].revert && !out[j].revert
	})
	return out
}

// Run executes the schedule with offsets counted from start. It returns when every timed step has
// run, or when ctx ends; a failed inject stops the schedule and is returned. Skipped faults are
// recorded on the timeline at once, and so is every fault whose inject the schedule never reached
// (ctx ended first: the load ended, or an interrupt; or an earlier inject failed), with the reason:
// every declared fault leaves a trace. One-shot faults (no duration) are reverted by RevertAll.
//
// Steps run in order, and an overdue step runs at once: a fault held up past its offset is injected
// late, and its revert may follow at once. The schedule only logs that; the judge compares every
// declared fault with its window on the timeline (timeline.DeclaredFault.Shortfall).
func (s *schedule) Run(ctx context.Context, start time.Time) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("fault schedule panicked: %v", p)
		}
		s.recordUnreached(ctx, start, err)
	}()
	for _, f := range s.faults {
		if f.Inj == nil {
			s.recordSkip(f, f.Skip)
		}
	}
	for _, st := range s.steps() {
		wait := st.at - s.now().Sub(start)
		if wait > 0 {
			if err := s.sleep(ctx, wait); err != nil {
				return nil // cancelled: teardown reverts, recordUnreached says what never ran
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if -wait > timeline.FaultSlack {
			s.log.Warn("fault step overdue", "fault", st.fault.label(), "revert", st.revert, "by", -wait)
		}
		if st.revert {
			if err := s.revert(ctx, st.fault); err != nil {
				return err
			}
			continue
		}
		if err := s.inject(ctx, st.fault); err != nil {
			return err
		}
	}
	return nil
}

// recordSkip records f as skipped on the timeline, saying why.
func (s *schedule) recordSkip(f *plannedFault, why string) {
	s.tl.Append(timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{
		Type: f.Spec.Type, Name: faultName(f.Index), Action: timeline.FaultSkip,
		Detail: why, Params: f.Spec.Params}})
	s.log.Warn("fault skipped", "fault", f.label(), "why", why)
}

// recordUnreached records a skip for every fault the schedule was to inject and never did, once Run
// stops: runErr is the inject error that stopped it, else ctx's cause says why it ended early.
func (s *schedule) recordUnreached(ctx context.Context, start time.Time, runErr error) {
	at := s.now().Sub(start).Round(100 * time.Millisecond)
	s.mu.Lock()
	var unreached []*plannedFault
	for _, f := range s.faults {
		if f.Inj != nil && !f.injected && !f.unreached {
			f.unreached = true
			unreached = append(unreached, f)
		}
	}
	s.mu.Unlock()
	for _, f := range unreached {
		var why string
		switch cause := context.Cause(ctx); {
		case runErr != nil:
			why = fmt.Sprintf("not injected: the schedule stopped at %s, before its start at %s, on an error: %v", at, f.Spec.At, runErr)
		case errors.Is(cause, errLoadEnded):
			why = fmt.Sprintf("not reached: the load ended (the schedule stopped at %s) before its start at %s", at, f.Spec.At)
		case cause != nil:
			why = fmt.Sprintf("not injected: the schedule was cancelled at %s (%v), before its start at %s", at, cause, f.Spec.At)
		default:
			why = fmt.Sprintf("not injected: the schedule ended at %s without reaching its start at %s", at, f.Spec.At)
		}
		s.recordSkip(f, why)
	}
}

func (s *schedule) inject(ctx context.Context, f *plannedFault) error {
	s.mu.Lock()
	if f.injected {
		s.mu.Unlock()
		return nil
	}
	// Marked before the call: a half-applied inject must still be reverted.
	f.injected = true
	s.mu.Unlock()
	s.log.Info("inject fault", "fault", f.label(), "at", f.Spec.At, "for", f.Spec.Duration)
	if err := f.Inj.Inject(ctx); err != nil {
		return fmt.Errorf("inject %s: %w", f.label(), err)
	}
	return nil
}

func (s *schedule) revert(ctx context.Context, f *plannedFault) error {
	s.mu.Lock()
	if !f.injected || f.reverted {
		s.mu.Unlock()
		return nil
	}
	f.reverted = true
	s.mu.Unlock()
	s.log.Info("revert fault", "fault", f.label())
	if err := f.Inj.Revert(ctx); err != nil {
		return fmt.Errorf("revert %s: %w", f.label(), err)
	}
	return nil
}

// RevertAll reverts every injected fault not yet reverted, in reverse injection order, with its own
// timeout so it works after ctx was cancelled. It returns every revert error joined.
func (s *schedule) RevertAll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), revertTimeout)
	defer cancel()
	var errs []error
	for i := len(s.faults) - 1; i >= 0; i-- {
		f := s.faults[i]
		if f.Inj == nil {
			continue
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					errs = append(errs, fmt.Errorf("revert %s panicked: %v", f.label(), p))
				}
			}()
			if err := s.revert(ctx, f); err != nil {
				errs = append(errs, err)
			}
		}()
	}
	return errors.Join(errs...)
}

// Active lists the faults injected and not yet reverted.
func (s *schedule) Active() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, f := range s.faults {
		if f.injected && !f.reverted && f.Spec.Duration > 0 {
			out = append(out, f.Spec.Type)
		}
	}
	return out
}
