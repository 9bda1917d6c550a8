package interrupt

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestSignalNamesAndExitCodes(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		name string
		code int
	}{{syscall.SIGINT, "SIGINT", 130}, {syscall.SIGTERM, "SIGTERM", 143}} {
		s := &Signal{Sig: tc.sig}
		if s.Name() != tc.name || s.ExitCode() != tc.code || s.Error() != "interrupted by "+tc.name {
			t.Errorf("%v: name %q code %d error %q", tc.sig, s.Name(), s.ExitCode(), s.Error())
		}
	}
}

// The first signal cancels the context with the signal as its cause, the second closes Hurry, a
// third changes nothing.
func TestWatchFirstCancelsSecondHurries(t *testing.T) {
	sigs := make(chan os.Signal, 3)
	told := make(chan int, 3)
	ctx, stop := Watch(context.Background(), sigs, func(_ *Signal, n int) { told <- n })
	defer stop()
	if From(ctx) != nil || ctx.Err() != nil {
		t.Fatal("context ended before any signal")
	}
	sigs <- syscall.SIGTERM
	<-told
	<-ctx.Done()
	s := From(ctx)
	if s == nil || s.Sig != syscall.SIGTERM || s.ExitCode() != 143 {
		t.Fatalf("cause = %v", context.Cause(ctx))
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("ctx.Err() = %v", ctx.Err())
	}
	select {
	case <-Hurry(ctx):
		t.Fatal("hurry closed by the first signal")
	default:
	}
	// A derived context (as teardown builds) still sees the hurry channel.
	derived := context.WithoutCancel(ctx)
	sigs <- syscall.SIGINT
	<-told
	select {
	case <-Hurry(derived):
	case <-time.After(5 * time.Second):
		t.Fatal("second signal did not close hurry")
	}
	sigs <- syscall.SIGINT
	if n := <-told; n != 3 {
		t.Fatalf("third signal counted %d", n)
	}
	if From(ctx).Sig != syscall.SIGTERM {
		t.Errorf("a later signal replaced the first as the cause: %v", From(ctx))
	}
}

func TestStopIsNotAnInterrupt(t *testing.T) {
	ctx, stop := Watch(context.Background(), make(chan os.Signal), nil)
	stop()
	stop()
	<-ctx.Done()
	if From(ctx) != nil {
		t.Fatalf("stop reported as a signal: %v", From(ctx))
	}
	if Hurry(context.Background()) != nil {
		t.Fatal("a plain context has a hurry channel")
	}
}

// Teardown outlives the cancelled run context, is bounded, and ends at the second signal.
func TestTeardown(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	told := make(chan int, 2)
	ctx, stop := Watch(context.Background(), sigs, func(_ *Signal, n int) { told <- n })
	defer stop()
	sigs <- syscall.SIGINT
	<-told
	<-ctx.Done()

	tctx, cancel := Teardown(ctx, time.Hour)
	defer cancel()
	if tctx.Err() != nil {
		t.Fatal("teardown context born cancelled")
	}
	short, cancelShort := Teardown(ctx, 10*time.Millisecond)
	defer cancelShort()
	select {
	case <-short.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("teardown context not bounded")
	}
	sigs <- syscall.SIGINT
	<-told
	select {
	case <-tctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("second signal did not end the teardown context")
	}
	// After the second signal a new teardown context is born ended: there is nothing to wait for.
	late, cancelLate := Teardown(ctx, time.Hour)
	defer cancelLate()
	select {
	case <-late.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("teardown after hurry still waits")
	}
	// Without Notify, Teardown is a plain bounded context.
	plain, cancelPlain := Teardown(context.Background(), time.Hour)
	defer cancelPlain()
	if plain.Err() != nil {
		t.Fatal("plain teardown context ended")
	}
}

// Notify hooks the real signals: a SIGTERM to this process cancels with SIGTERM as the cause.
func TestNotifyRealSignal(t *testing.T) {
	ctx, stop := Notify(context.Background(), nil)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGTERM did not cancel")
	}
	if s := From(ctx); s == nil || s.Name() != "SIGTERM" {
		t.Fatalf("cause = %v", context.Cause(ctx))
	}
}
