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
}

func (p *plannedFault) label() string {
	return fmt.Sprintf("faults[%d] %s", p.Index, p.Spec.Type)
}

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
// recorded on the timeline at once. One-shot faults (no duration) are reverted by RevertAll.
func (s *schedule) Run(ctx context.Context, start time.Time) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("fault schedule panicked: %v", p)
		}
	}()
	for _, f := range s.faults {
		if f.Inj == nil {
			s.tl.Append(timeline.Entry{Kind: timeline.KindFault, Fault: &timeline.FaultAction{
				Type: f.Spec.Type, Name: fmt.Sprintf("faults[%d]", f.Index), Action: timeline.FaultSkip,
				Detail: f.Skip, Params: f.Spec.Params}})
			s.log.Warn("fault skipped", "fault", f.label(), "why", f.Skip)
		}
	}
	for _, st := range s.steps() {
		if wait := st.at - s.now().Sub(start); wait > 0 {
			if err := s.sleep(ctx, wait); err != nil {
				return nil // cancelled: teardown reverts
			}
		}
		if ctx.Err() != nil {
			return nil
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
