package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// RevertTimeout bounds RevertAll when it is called with a context that has already ended.
const RevertTimeout = 30 * time.Second

// Set tracks the faults that may be injected so that every one is reverted however the run ends:
// defer RevertAll for teardown and panics, and call HandleSignals for Ctrl-C.
type Set struct {
	mu     sync.Mutex
	faults []Fault // in injection order
}

// Inject records f in the set, then injects it. f is tracked even when Inject fails: a half-applied
// fault must still be reverted.
func (s *Set) Inject(ctx context.Context, f Fault) error {
	s.mu.Lock()
	found := false
	for _, g := range s.faults {
		found = found || g == f
	}
	if !found {
		s.faults = append(s.faults, f)
	}
	s.mu.Unlock()
	if err := f.Inject(ctx); err != nil {
		return fmt.Errorf("inject %s: %w", f.Type(), err)
	}
	return nil
}

// Revert reverts f and stops tracking it once reverted.
func (s *Set) Revert(ctx context.Context, f Fault) error {
	if err := f.Revert(ctx); err != nil {
		return fmt.Errorf("revert %s: %w", f.Type(), err)
	}
	s.mu.Lock()
	for i, g := range s.faults {
		if g == f {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	return nil
}

// RevertAll reverts every tracked fault, newest first, even after ctx has ended (it then uses its
// own RevertTimeout). A panicking Revert is caught and reported. It returns every failure joined.
func (s *Set) RevertAll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RevertTimeout)
	defer cancel()
	s.mu.Lock()
	faults := append([]Fault(nil), s.faults...)
	s.mu.Unlock()
	var errs []error
	for i := len(faults) - 1; i >= 0; i-- {
		func() {
			defer func() {
				if p := recover(); p != nil {
					errs = append(errs, fmt.Errorf("revert %s panicked: %v", faults[i].Type(), p))
				}
			}()
			if err := s.Revert(ctx, faults[i]); err != nil {
				errs = append(errs, err)
			}
		}()
	}
	return errors.Join(errs...)
}

// HandleSignals reverts every tracked fault on the first SIGINT or SIGTERM, then calls interrupted
// (e.g. the run's context cancel). A second signal is left to the default handler, so a user can
// still kill a stuck run. Call the returned stop when the run is over.
func (s *Set) HandleSignals(interrupted func(), onErr func(error)) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var once sync.Once
	go func() {
		select {
		case <-ch:
			signal.Stop(ch)
			if err := s.RevertAll(context.Background()); err != nil && onErr != nil {
				onErr(err)
			}
			if interrupted != nil {
				interrupted()
			}
		case <-done:
		}
	}()
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}
