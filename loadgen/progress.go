package loadgen

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/probegate/probegate/internal/timeline"
)

// progress prints a one-line live status (achieved rate, errors, p99 over the last second, ready
// endpoints) on a terminal, refreshed each second, and nothing at all anywhere else.
type progress struct {
	w     io.Writer // nil when not a terminal
	ready func() int
	since time.Time       // start of the current second
	lat   []time.Duration // latencies completed this second
	bad   int             // failures completed this second
	errs  int
}

func newProgress(w io.Writer, ready func() int) *progress {
	p := &progress{ready: ready, since: time.Now()}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.w = w
	}
	return p
}

func (p *progress) add(q timeline.Request) {
	if p.w == nil {
		return
	}
	p.lat = append(p.lat, q.Latency)
	if !q.OK() {
		p.bad++
		p.errs++
	}
}

func (p *progress) tick(now, start time.Time, target float64) {
	if p.w == nil || now.Sub(p.since) < time.Second {
		return
	}
	rate := float64(len(p.lat)) / now.Sub(p.since).Seconds()
	line := fmt.Sprintf("load %5.0fs  %6.1f/s (target %g)  errors %d (%d this s)  p99 %v",
		now.Sub(start).Seconds(), rate, target, p.errs, p.bad, percentile(p.lat, 0.99).Round(100*time.Microsecond))
	if p.ready != nil {
		line += fmt.Sprintf("  ready endpoints %d", p.ready())
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.since, p.lat, p.bad = now, p.lat[:0], 0
}

func (p *progress) done(r Report) {
	if p.w == nil {
		return
	}
	fmt.Fprintf(p.w, "\r\033[Kload done: %d sent, %d recorded, %d ok, %.1f/s achieved, p99 %v\n",
		r.Sent, r.Recorded, r.OK, r.Achieved, r.P99.Round(100*time.Microsecond))
}
