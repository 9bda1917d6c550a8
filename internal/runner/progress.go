package runner

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// Progress repaints one live line on a terminal with what every running scenario is doing:
// "db-slowness load 23s/45s ready 3 fault db-latency | cold-start deploy". A nil *Progress does
// nothing, so callers need no checks.
type Progress struct {
	w    io.Writer
	mu   sync.Mutex
	runs map[string]*runStatus
	stop chan struct{}
	done chan struct{}
	last int
	once sync.Once
}

// NewProgress starts repainting on w every interval until Close. Pass a terminal only.
func NewProgress(w io.Writer, interval time.Duration) *Progress {
	p := &Progress{w: w, runs: map[string]*runStatus{}, stop: make(chan struct{}), done: make(chan struct{})}
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
				p.paint(p.Line())
			}
		}
	}()
	return p
}

// Close clears the line and stops repainting. It is safe to call more than once.
func (p *Progress) Close() {
	if p == nil {
		return
	}
	p.once.Do(func() { close(p.stop) })
	<-p.done
}

func (p *Progress) paint(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pad := ""
	if n := p.last - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(p.w, "\r%s%s\r", line, pad)
	p.last = len(line)
}

// Line is the current status line.
func (p *Progress) Line() string {
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

func (p *Progress) track(name string) *runStatus {
	s := &runStatus{name: name, phase: "start", owner: p}
	if p != nil {
		p.mu.Lock()
		p.runs[name] = s
		p.mu.Unlock()
	}
	return s
}

// runStatus is one scenario's part of the line.
type runStatus struct {
	owner *Progress
	mu    sync.Mutex
	name  string
	phase string
	obs   Observation
	sched *Schedule
	start time.Time
	dur   time.Duration
}

func (s *runStatus) set(phase string) {
	s.mu.Lock()
	s.phase = phase
	s.mu.Unlock()
}

func (s *runStatus) watch(obs Observation, sched *Schedule, start time.Time, d time.Duration) {
	s.mu.Lock()
	s.obs, s.sched, s.start, s.dur = obs, sched, start, d
	s.mu.Unlock()
}

func (s *runStatus) done() {
	if s.owner == nil {
		return
	}
	s.owner.mu.Lock()
	delete(s.owner.runs, s.name)
	s.owner.mu.Unlock()
}

func (s *runStatus) describe() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.name + " " + s.phase
	if s.phase == "schedule-start" && !s.start.IsZero() {
		out = fmt.Sprintf("%s load %s/%s", s.name, time.Since(s.start).Truncate(time.Second), s.dur)
		if s.obs != nil {
			out += fmt.Sprintf(" ready %d", s.obs.ReadyEndpoints())
		}
		if s.sched != nil {
			if active := s.sched.Active(); len(active) > 0 {
				out += " fault " + strings.Join(active, ",")
			}
		}
	}
	return out
}
