package runner

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/loadgen"
	"github.com/probegate/probegate/reports"
)

func init() {
	registerLoad(loadProtocol{
		Name: scenario.LoadGRPC,
		Doc: "unary calls of the target file's grpc.method (the health check by default), each client multiplexing its calls " +
			"over one long-lived connection: keepAlive does not apply",
		Start: startGRPCLoad,
	})
}

// startGRPCLoad drives the scenario's load as gRPC calls to the host:port of spec.URL (the request
// path is an HTTP one and is not used). A method the server does not serve is found here, by
// reflection, and fails the start.
func startGRPCLoad(ctx context.Context, spec loadSpec, tl *timeline.Timeline, log *slog.Logger) (loadRun, error) {
	u, err := url.Parse(spec.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("gRPC load: target URL %q: no host:port", spec.URL)
	}
	call := scenario.GRPCCall{Method: scenario.GRPCHealthCheck}
	if spec.GRPC != nil {
		call = *spec.GRPC
	}
	if !spec.KeepAlive {
		log.Debug("keepAlive: false does not apply to gRPC: each client multiplexes its calls over one connection", "clients", max(spec.Clients, 1))
	}
	run := &grpcRun{}
	l, err := loadgen.StartGRPC(ctx, loadgen.GRPCConfig{
		Target: u.Host, Method: call.Method, Request: call.Request, Service: call.Service,
		PodHeader: spec.PodHeader, IgnorePodHeader: spec.IgnorePodHeader,
		Rate: float64(spec.Rate), Duration: spec.Duration, Timeout: spec.Timeout,
		AllowHost: spec.AllowHost, Clients: spec.Clients, MaxInFlight: spec.MaxWorkers,
		Timeline:  tl,
		OnRequest: run.add,
		Logger:    log,
	})
	if err != nil {
		return nil, fmt.Errorf("gRPC load on %s: %w", u.Host, err)
	}
	run.load = l
	return run, nil
}

// grpcRun is a gRPC load in progress; after Wait it lists the connections the clients held.
type grpcRun struct {
	load *loadgen.GRPCLoad
	kept
	rep loadgen.GRPCReport // set by Wait, under kept.mu
}

func (r *grpcRun) SetRate(rate float64) float64 { return r.load.SetRate(rate) }
func (r *grpcRun) Stop()                        { r.load.Stop() }

// Counts is the load's tally (the overload fault's proof of effect).
func (r *grpcRun) Counts() loadgen.Counts { return r.load.Counts() }

func (r *grpcRun) Wait() ([]timeline.Request, error) {
	rep, err := r.load.Wait()
	r.mu.Lock()
	r.rep = rep
	r.mu.Unlock()
	reqs := r.all()
	if err != nil {
		return reqs, fmt.Errorf("gRPC load on %s (sent %d, recorded %d): %w", rep.Target, rep.Sent, rep.Recorded, err)
	}
	return reqs, nil
}

// Connections lists the connections the clients opened, in order (none before Wait returns).
func (r *grpcRun) Connections() []reports.Connection {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]reports.Connection, len(r.rep.Conns))
	for i, c := range r.rep.Conns {
		out[i] = reports.Connection{Client: c.Client, Local: c.Local, Remote: c.Remote, OpenedAt: c.OpenedAt,
			ClosedAt: c.ClosedAt, Calls: c.Calls, FirstCall: c.FirstCall, LastCall: c.LastCall}
	}
	return out
}
