package faults

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// logFault records its calls into a shared log.
type logFault struct {
	name   string
	log    *[]string
	mu     *sync.Mutex
	failOn string
	panics bool
}

func (f *logFault) Type() string { return f.name }
func (f *logFault) note(s string) {
	f.mu.Lock()
	*f.log = append(*f.log, s+" "+f.name)
	f.mu.Unlock()
}
func (f *logFault) Inject(context.Context) error {
	f.note("inject")
	if f.failOn == "inject" {
		return errors.New("half applied")
	}
	return nil
}
func (f *logFault) Revert(context.Context) error {
	if f.panics {
		panic("boom")
	}
	f.note("revert")
	if f.failOn == "revert" {
		return errors.New("revert failed")
	}
	return nil
}

func TestSetRevertsEverythingNewestFirst(t *testing.T) {
	var log []string
	var mu sync.Mutex
	mk := func(n string) *logFault { return &logFault{name: n, log: &log, mu: &mu} }
	var s Set
	a, b, c := mk("a"), mk("b"), mk("c")
	c.failOn = "inject"
	for _, f := range []*logFault{a, b} {
		if err := s.Inject(context.Background(), f); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Inject(context.Background(), c); err == nil {
		t.Fatal("failed inject not reported")
	}
	if err := s.Revert(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // teardown after Ctrl-C: RevertAll must still work
	if err := s.RevertAll(ctx); err != nil {
		t.Fatal(err)
	}
	want := "inject a|inject b|inject c|revert b|revert c|revert a"
	if got := strings.Join(log, "|"); got != want {
		t.Fatalf("calls %s, want %s", got, want)
	}
	if err := s.RevertAll(context.Background()); err != nil || len(log) != 6 {
		t.Fatalf("second RevertAll did something: %v %v", err, log)
	}
}

func TestSetRevertAllSurvivesPanicsAndErrors(t *testing.T) {
	var log []string
	var mu sync.Mutex
	var s Set
	bad := &logFault{name: "bad", log: &log, mu: &mu, panics: true}
	failing := &logFault{name: "failing", log: &log, mu: &mu, failOn: "revert"}
	good := &logFault{name: "good", log: &log, mu: &mu}
	for _, f := range []*logFault{good, bad, failing} {
		s.Inject(context.Background(), f)
	}
	err := s.RevertAll(context.Background())
	if err == nil || !strings.Contains(err.Error(), "panicked") || !strings.Contains(err.Error(), "revert failed") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(strings.Join(log, "|"), "revert good") {
		t.Fatalf("a panic stopped the other reverts: %v", log)
	}
}

func TestSetRevertsOnPanicFromADefer(t *testing.T) {
	var log []string
	var mu sync.Mutex
	var s Set
	f := &logFault{name: "x", log: &log, mu: &mu}
	func() {
		defer func() { recover() }()
		defer s.RevertAll(context.Background())
		s.Inject(context.Background(), f)
		panic("scenario bug")
	}()
	if strings.Join(log, "|") != "inject x|revert x" {
		t.Fatalf("calls = %v", log)
	}
}

func TestSetRevertsOnSignal(t *testing.T) {
	var log []string
	var mu sync.Mutex
	var s Set
	s.Inject(context.Background(), &logFault{name: "x", log: &log, mu: &mu})
	interrupted := make(chan struct{})
	stop := s.HandleSignals(func() { close(interrupted) }, func(err error) { t.Error(err) })
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-interrupted:
	case <-time.After(5 * time.Second):
		t.Fatal("no revert after SIGINT")
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(log, "|") != "inject x|revert x" {
		t.Fatalf("calls = %v", log)
	}
}
