// Package interrupt turns SIGINT and SIGTERM into the cancellation of a run that must clean up
// before it exits. The first signal cancels the run's context with a *Signal as its cause, so
// every phase stops and teardown learns which signal it was; the second closes Hurry, so teardown
// skips what it would only wait for (judging, slow cleanups) while still reverting faults; every
// later signal is ignored, so the reverts are never cut short. The process then exits with
// 128+signal (130 for SIGINT, 143 for SIGTERM).
package interrupt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Signal is the cause of a context ended by an interrupt.
type Signal struct {
	Sig syscall.Signal
}

// Error implements error: "interrupted by SIGINT".
func (s *Signal) Error() string { return "interrupted by " + s.Name() }

// Name is the signal's name, "SIGINT" or "SIGTERM".
func (s *Signal) Name() string {
	switch s.Sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return "signal " + s.Sig.String()
}

// ExitCode is the shell's code for a process ended by the signal: 128+signal number.
func (s *Signal) ExitCode() int { return 128 + int(s.Sig) }

// From returns the signal that ended ctx, or nil when ctx has not ended or ended otherwise.
func From(ctx context.Context) *Signal {
	var s *Signal
	if errors.As(context.Cause(ctx), &s) {
		return s
	}
	return nil
}

type hurryKey struct{}

// Hurry returns a channel closed by the second signal: teardown stops waiting for anything but
// the revert of faults. It is nil (never closed) when ctx does not come from Notify.
func Hurry(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(hurryKey{}).(chan struct{})
	return ch
}

// Notify returns a context cancelled with a *Signal cause by the first SIGINT or SIGTERM the
// process receives, and carrying the Hurry channel the second one closes. Each signal is
// acknowledged with one line on w (none when w is nil). Call stop when the run is over: it stops
// listening and releases the context.
func Notify(parent context.Context, w io.Writer) (ctx context.Context, stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	ctx, end := Watch(parent, ch, func(s *Signal, n int) {
		if w == nil {
			return
		}
		switch n {
		case 1:
			fmt.Fprintf(w, "\nprobegate: %s: stopping (faults are reverted, what was recorded is written); send it again to skip the waiting\n", s)
		case 2:
			fmt.Fprintf(w, "\nprobegate: %s again: skipping the waits; faults are still reverted\n", s.Name())
		default:
			fmt.Fprintf(w, "\nprobegate: %s ignored: still reverting faults\n", s.Name())
		}
	})
	return ctx, func() {
		signal.Stop(ch)
		end()
	}
}

// Watch is Notify over any channel of signals (tests send their own); told, when not nil, is
// called on each signal with its count, before the context or Hurry reacts to it.
func Watch(parent context.Context, signals <-chan os.Signal, told func(s *Signal, n int)) (ctx context.Context, stop func()) {
	hurry := make(chan struct{})
	ctx, cancel := context.WithCancelCause(context.WithValue(parent, hurryKey{}, hurry))
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case sig := <-signals:
				n++
				s := &Signal{Sig: syscall.SIGINT}
				if ss, ok := sig.(syscall.Signal); ok {
					s.Sig = ss
				}
				if told != nil {
					told(s, n)
				}
				switch n {
				case 1:
					cancel(s)
				case 2:
					close(hurry)
				}
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			close(done)
			cancel(context.Canceled)
		})
	}
}

// Teardown returns a context for cleanup after ctx may have ended: it is not cancelled with ctx,
// lasts at most d, and ends at the second signal (Hurry). Use it for work a user in a hurry may
// skip; reverting faults must not use it.
func Teardown(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	hurry := Hurry(ctx)
	if hurry == nil {
		return tctx, cancel
	}
	go func() {
		select {
		case <-hurry:
			cancel()
		case <-tctx.Done():
		}
	}()
	return tctx, cancel
}
