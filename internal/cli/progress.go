package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// progressLine repaints one live line on a terminal with what every running scenario is doing:
// "db-slowness load 23s/45s ready 3 fault db-latency | cold-start deploy". It implements
// runner.Progress. A nil *progressLine does nothing, so callers need no checks.
type progressLine struct {
	w    io.Writer
	mu   sync.Mutex
	runs map[string]*runStatus
	stop chan struct{}
	done chan struct{}
	last int
	once sync.Once
}

// newProgressLine starts repainting on w every interval until Close. Pass a terminal only.
func newProgressLine(w io.Writer, interval time.Duration) *progressLine {
	p := &progressLine{w: w, runs: map[string]*runStatus{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				p.paint("")
				return
			case <-t.C:
				p.paint(p.line())
			}
		}
	}()
	return p
}

// Close clears the line and stops repainting. It is safe to call more than once.
func (p *progressLine) Close() {
	if p == nil {
		return
	}
	p.once.Do(func() { close(p.stop) })
	<-p.done
}

func (p *progressLine) paint(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pad := ""
	if n := p.last - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(p.w, "\r%s%s\r", line, pad)
	p.last = len(line)
}

// line is the current status line.
func (p *progressLine) line() string {
	p.mu.Lock()
	names := make([]string, 0, len(p.runs))
	for n := range p.runs {
		names = append(names, n)
	}
	sort.Strings(names)
	runs := make([]*runStatus, 0, len(names))
	for _, n := range names {
		runs = append(runs, p.runs[n])
	}
	p.mu.Unlock()
	parts := make([]string, 0, len(runs))
	for _, r := range runs {
		parts = append(parts, r.describe())
	}
	return strings.Join(parts, " | ")
}

// run is the scenario's status, created on first mention.
func (p *progressLine) run(name string) *runStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.runs[name]
	if !ok {
		s = &runStatus{name: name}
		p.runs[name] = s
	}
	return s
}

// Phase implements runner.Progress.
func (p *progressLine) Phase(scenario, phase string) {
	if p == nil {
		return
	}
	s := p.run(scenario)
	s.mu.Lock()
	s.phase = phase
	s.mu.Unlock()
}

// Load implements runner.Progress.
func (p *progressLine) Load(scenario string, start time.Time, d time.Duration, ready func() int, active func() []string) {
	if p == nil {
		return
	}
	s := p.run(scenario)
	s.mu.Lock()
	s.ready, s.active, s.start, s.dur = ready, active, start, d
	s.mu.Unlock()
}

// Done implements runner.Progress.
func (p *progressLine) Done(scenario string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	delete(p.runs, scenario)
	p.mu.Unlock()
}

// runStatus is one scenario's part of the line.
type runStatus struct {
	mu     sync.Mutex
	name   string
	phase  string
	ready  func() int
	active func() []string
	start  time.Time
	dur    time.Duration
}

func (s *runStatus) describe() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.name + " " + s.phase
	if s.phase == "schedule-start" && !s.start.IsZero() {
		out = fmt.Sprintf("%s load %s/%s", s.name, time.Since(s.start).Truncate(time.Second), s.dur)
		if s.ready != nil {
			out += fmt.Sprintf(" ready %d", s.ready())
		}
		if s.active != nil {
			if active := s.active(); len(active) > 0 {
				out += " fault " + strings.Join(active, ",")
			}
		}
	}
	return out
}
