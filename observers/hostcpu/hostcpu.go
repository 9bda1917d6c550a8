// Package hostcpu records how starved for CPU the machine is that runs the harness and a local
// cluster's nodes. On a kind cluster kubelet's probes, kube-proxy, the target and the load generator
// all share this machine's CPUs: when runnable tasks queue for them, probes and routing run late
// whatever the target does, and a timing verdict may judge the machine instead of the target.
package hostcpu

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// DefaultInterval is the length of one sample.
const DefaultInterval = time.Second

// Linux's pressure stall information and scheduler counters.
const (
	pressurePath = "/proc/pressure/cpu"
	statPath     = "/proc/stat"
)

// reading is one read of the counters: the total time some task waited for a CPU, and how many
// tasks were runnable.
type reading struct {
	waiting  time.Duration
	runnable int
}

// parsePressure reads the "some" line's total (microseconds) of /proc/pressure/cpu.
func parsePressure(data []byte) (time.Duration, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "some" {
			continue
		}
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(f, "total="); ok {
				us, err := strconv.ParseUint(v, 10, 63)
				if err != nil {
					return 0, fmt.Errorf("cpu pressure total %q: %w", v, err)
				}
				return time.Duration(us) * time.Microsecond, nil
			}
		}
	}
	return 0, errors.New("cpu pressure: no \"some … total=\" line")
}

// parseRunnable reads procs_running of /proc/stat.
func parseRunnable(data []byte) (int, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "procs_running "); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("stat: no procs_running line")
}

// source reads the counters; tests replace it.
type source func() (reading, error)

func readProc() (reading, error) {
	p, err := os.ReadFile(pressurePath)
	if err != nil {
		return reading{}, fmt.Errorf("read CPU pressure (kernel without PSI?): %w", err)
	}
	waiting, err := parsePressure(p)
	if err != nil {
		return reading{}, err
	}
	s, err := os.ReadFile(statPath)
	if err != nil {
		return reading{}, err
	}
	runnable, err := parseRunnable(s)
	if err != nil {
		return reading{}, err
	}
	return reading{waiting: waiting, runnable: runnable}, nil
}

// Watcher samples the host until stopped.
type Watcher struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// Start samples the machine every interval (DefaultInterval when 0) and appends one KindHost entry
// per sample to tl, until Stop or ctx ends. It fails when the kernel offers no CPU pressure
// information (Linux before 4.20, or PSI disabled): then there is nothing to record.
func Start(ctx context.Context, tl *timeline.Timeline, interval time.Duration, log *slog.Logger) (*Watcher, error) {
	return start(ctx, tl, interval, readProc, runtime.NumCPU(), log)
}

func start(ctx context.Context, tl *timeline.Timeline, interval time.Duration, read source, cpus int, log *slog.Logger) (*Watcher, error) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	prev, err := read()
	if err != nil {
		return nil, err
	}
	last := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				// The interval runs from read to read: on a starved host the goroutine itself
				// wakes late, and the counter covers up to the read.
				cur, err := read()
				now := time.Now()
				if err != nil {
					log.Warn("host CPU sampling stopped", "err", err)
					return
				}
				span := now.Sub(last)
				if span <= 0 {
					continue
				}
				tl.Append(timeline.Entry{Kind: timeline.KindHost, Host: &timeline.HostSample{
					Interval:   span,
					CPUWaiting: min(max(float64(cur.waiting-prev.waiting)/float64(span), 0), 1),
					Runnable:   cur.runnable,
					CPUs:       cpus,
				}})
				prev, last = cur, now
			}
		}
	}()
	return w, nil
}

// Stop ends the sampling and waits for it. It is safe to call more than once.
func (w *Watcher) Stop() {
	if w == nil {
		return
	}
	w.once.Do(func() {
		w.cancel()
		<-w.done
	})
}
