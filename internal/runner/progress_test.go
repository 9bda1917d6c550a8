package runner

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
)

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf, time.Hour) // repaint only on Close
	a := p.track("db-slowness")
	b := p.track("cold-start")
	b.set("deploy")
	sched := NewSchedule([]*plannedFault{{Spec: scenario.Fault{Type: "db-latency", At: 0, Duration: time.Minute}, Inj: &recordingInjector{name: "x", j: &journal{}, tl: timeline.New(time.Now())}}},
		timeline.New(time.Now()), nil)
	sched.faults[0].injected = true
	a.set("schedule-start")
	a.watch(&fakeObservers{}, sched, time.Now().Add(-12*time.Second), 50*time.Second)
	line := p.Line()
	if want := "cold-start deploy | db-slowness load 12s/50s ready 3 fault db-latency"; line != want {
		t.Fatalf("line = %q, want %q", line, want)
	}
	a.done()
	if got := p.Line(); got != "cold-start deploy" {
		t.Fatalf("after done: %q", got)
	}
	p.Close()
	p.Close() // idempotent
	if !strings.HasSuffix(buf.String(), "\r") {
		t.Errorf("Close did not clear the line: %q", buf.String())
	}
	var nilP *Progress
	nilP.track("x").set("deploy") // a nil Progress is a no-op
	nilP.Close()
}
