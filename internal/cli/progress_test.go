package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/runner"
)

var _ runner.Progress = (*progressLine)(nil)

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressLine(&buf, time.Hour) // repaint only on Close
	p.Phase("db-slowness", "start")
	p.Phase("cold-start", "start")
	p.Phase("cold-start", "deploy")
	p.Phase("db-slowness", "schedule-start")
	p.Load("db-slowness", time.Now().Add(-12*time.Second), 50*time.Second,
		func() int { return 3 }, func() []string { return []string{"db-latency"} })
	line := p.line()
	if want := "cold-start deploy | db-slowness load 12s/50s ready 3 fault db-latency"; line != want {
		t.Fatalf("line = %q, want %q", line, want)
	}
	p.Done("db-slowness")
	if got := p.line(); got != "cold-start deploy" {
		t.Fatalf("after done: %q", got)
	}
	p.Close()
	p.Close() // idempotent
	if !strings.HasSuffix(buf.String(), "\r") {
		t.Errorf("Close did not clear the line: %q", buf.String())
	}
	var nilP *progressLine
	nilP.Phase("x", "deploy") // a nil progressLine is a no-op
	nilP.Done("x")
	nilP.Close()
}
