package loadgen

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func TestProgressIsQuietWhenNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, func() int { return 3 })
	p.add(timeline.Request{Status: 200, Latency: time.Millisecond})
	p.tick(time.Now().Add(2*time.Second), time.Now(), 100)
	p.done(Report{Sent: 1})
	f, err := os.CreateTemp(t.TempDir(), "progress")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q := newProgress(f, nil)
	q.add(timeline.Request{Status: 200})
	q.tick(time.Now().Add(2*time.Second), time.Now(), 100)
	if buf.Len() != 0 || q.w != nil {
		t.Fatalf("progress written to a non-terminal: %q", buf.String())
	}
}

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	start := time.Now()
	p := &progress{w: &buf, ready: func() int { return 2 }, since: start}
	for i := range 99 {
		p.add(timeline.Request{Status: 200, Latency: time.Duration(i+1) * time.Millisecond})
	}
	p.add(timeline.Request{Error: timeline.ErrRefused, Latency: 500 * time.Millisecond})
	p.tick(start.Add(500*time.Millisecond), start, 100) // less than a second: nothing yet
	if buf.Len() != 0 {
		t.Fatalf("refreshed before a second passed: %q", buf.String())
	}
	p.tick(start.Add(time.Second), start, 100)
	line := buf.String()
	for _, want := range []string{"100.0/s", "target 100", "errors 1", "p99 99ms", "ready endpoints 2"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
}
