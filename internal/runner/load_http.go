package runner

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/loadgen"
)

func init() {
	registerLoad(loadProtocol{
		Name: scenario.LoadHTTP,
		Doc:  "HTTP/1.1 GETs of the target's request path; keepAlive: false opens a new connection per request",
		Start: func(ctx context.Context, spec loadSpec, tl *timeline.Timeline, log *slog.Logger) (loadRun, error) {
			return vegetaLoad{Logger: log}.Start(ctx, spec, tl)
		},
	})
}

// vegetaLoad drives HTTP load with the loadgen package, keeping every request in memory.
type vegetaLoad struct {
	Logger *slog.Logger
}

// Start implements loadStarter.
func (v vegetaLoad) Start(ctx context.Context, spec loadSpec, tl *timeline.Timeline) (loadRun, error) {
	run := &vegetaRun{}
	cfg := loadgen.Config{
		URL:                     spec.URL,
		Header:                  spec.Header,
		Rate:                    float64(spec.Rate),
		Duration:                spec.Duration,
		Timeout:                 spec.Timeout,
		NewConnectionPerRequest: !spec.KeepAlive,
		Clients:                 spec.Clients,
		PodHeader:               spec.PodHeader,
		IgnorePodHeader:         spec.IgnorePodHeader,
		AllowHost:               spec.AllowHost,
		MaxWorkers:              spec.MaxWorkers,
		Timeline:                tl,
		OnRequest:               run.add,
		Logger:                  v.Logger,
	}
	l, err := loadgen.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	run.load = l
	return run, nil
}

type vegetaRun struct {
	load *loadgen.Load
	kept
}

func (r *vegetaRun) SetRate(rate float64) float64 { return r.load.SetRate(rate) }
func (r *vegetaRun) Stop()                        { r.load.Stop() }

// Counts is the load's tally, which the overload fault reads as its proof of effect.
func (r *vegetaRun) Counts() loadgen.Counts { return r.load.Counts() }

func (r *vegetaRun) Wait() ([]timeline.Request, error) {
	rep, err := r.load.Wait()
	reqs := r.all()
	if err != nil {
		return reqs, fmt.Errorf("load on %s (sent %d, recorded %d): %w", rep.URL, rep.Sent, rep.Recorded, err)
	}
	return reqs, nil
}

// kept holds the requests a load recorded so far, for the faults that read them while it runs.
type kept struct {
	mu   sync.Mutex
	reqs []timeline.Request
}

func (k *kept) add(q timeline.Request) {
	k.mu.Lock()
	k.reqs = append(k.reqs, q)
	k.mu.Unlock()
}

func (k *kept) all() []timeline.Request {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.reqs
}

// ServedBy counts the requests recorded so far by the pod that served them (the "busiest" pod choice).
func (k *kept) ServedBy() map[string]uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]uint64{}
	for _, q := range k.reqs {
		if q.Pod != "" {
			out[q.Pod]++
		}
	}
	return out
}
