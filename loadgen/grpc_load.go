package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/probegate/probegate/internal/timeline"
)

// GRPCLoad is a running gRPC load. Start it with StartGRPC; end it with Stop or let its bounds end
// it; Wait for the GRPCReport.
type GRPCLoad struct {
	cfg     GRPCConfig
	method  *grpcMethod
	pacer   *phasedPacer
	clients []*grpc.ClientConn
	conns   *grpcConns
	start   time.Time
	results chan grpcResult

	sent      atomic.Uint64
	completed atomic.Uint64
	succeeded atomic.Uint64
	latency   atomic.Int64 // summed, in nanoseconds
	done      chan struct{}
	stopOnce  sync.Once

	report GRPCReport
	err    error
}

// GRPCReport sums up a finished gRPC run, as Report does an HTTP one, with the calls by status code
// and every connection the clients opened.
type GRPCReport struct {
	Target   string        `json:"target"`
	Method   string        `json:"method"`
	Start    time.Time     `json:"start"`
	T        time.Duration `json:"t"`
	Duration time.Duration `json:"duration"`
	Sent     uint64        `json:"sent"`
	Recorded uint64        `json:"recorded"`
	OK       uint64        `json:"ok"`
	Failed   uint64        `json:"failed"`
	Reused   uint64        `json:"reused"`  // calls that were not their connection's first
	Retried  uint64        `json:"retried"` // calls grpc-go transparently sent again
	Achieved float64       `json:"achieved"`
	P50      time.Duration `json:"p50"`
	P99      time.Duration `json:"p99"`
	// Codes counts calls by status code name; a health check answered NOT_SERVING counts as OK here
	// and as not-serving in Errors.
	Codes         map[string]uint64              `json:"codes,omitempty"`
	Errors        map[timeline.ErrorClass]uint64 `json:"errors,omitempty"`
	ByPod         map[string]uint64              `json:"byPod,omitempty"`
	Conns         []GRPCConn                     `json:"conns,omitempty"`
	Windows       int                            `json:"windows"`
	LateForWindow int                            `json:"lateForWindow,omitempty"`
}

// grpcResult is one finished call on its way to the recorder.
type grpcResult struct {
	seq     uint64
	start   time.Time
	latency time.Duration
	err     error
	call    *grpcCall
}

// RunGRPC starts a gRPC load and waits for it to end (by its bounds, ctx, or Stop).
func RunGRPC(ctx context.Context, cfg GRPCConfig) (GRPCReport, error) {
	l, err := StartGRPC(ctx, cfg)
	if err != nil {
		return GRPCReport{}, err
	}
	return l.Wait()
}

// StartGRPC validates cfg, learns the method's message types (from the server's reflection service,
// for any method but the health check) and starts the load. Cancelling ctx stops it; calls in flight
// complete (or reach their deadline) and are recorded, then the connections are closed.
func StartGRPC(ctx context.Context, cfg GRPCConfig) (*GRPCLoad, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	method, err := grpcMethodFor(ctx, cfg, d)
	if err != nil {
		return nil, err
	}
	l := &GRPCLoad{
		cfg:     cfg,
		method:  method,
		pacer:   newPhasedPacer(cfg.Phases, cfg.Duration, cfg.Count),
		conns:   newGRPCConns(),
		results: make(chan grpcResult, 1024),
		done:    make(chan struct{}),
	}
	podHeader := cfg.PodHeader
	if cfg.IgnorePodHeader {
		podHeader = ""
	}
	for i := range cfg.Clients {
		cc, err := grpc.NewClient("passthrough:///"+cfg.Target,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(l.conns.dialer(i, d, cfg.AllowHost)),
			grpc.WithStatsHandler(grpcStats{conns: l.conns, podHeader: podHeader}),
			grpc.WithDisableServiceConfig(),
			grpc.WithUserAgent("probegate"),
		)
		if err != nil {
			l.closeClients()
			return nil, fmt.Errorf("loadgen: gRPC client for %s: %w", cfg.Target, err)
		}
		l.clients = append(l.clients, cc)
	}
	l.start = time.Now()
	cfg.Timeline.Append(timeline.Entry{At: l.start, Kind: timeline.KindMark, Mark: &timeline.Mark{
		Name: "load-start", Detail: fmt.Sprintf("gRPC %s %s %s", cfg.Target, cfg.Method, describePhases(cfg.Phases)),
	}})
	cfg.Logger.Info("gRPC load started", "target", cfg.Target, "method", cfg.Method, "phases", describePhases(cfg.Phases),
		"duration", cfg.Duration, "count", cfg.Count, "clients", cfg.Clients)
	go func() {
		select {
		case <-ctx.Done():
			l.Stop()
		case <-l.done:
		}
	}()
	go l.send()
	go l.consume()
	return l, nil
}

// grpcMethodFor returns the health check, or resolves cfg.Method over a short-lived connection of
// its own (not one of the load's).
func grpcMethodFor(ctx context.Context, cfg GRPCConfig, d *net.Dialer) (*grpcMethod, error) {
	if cfg.Method == HealthCheckMethod {
		return healthMethod(cfg.Service, cfg.Request)
	}
	dial := loopbackDial(d, cfg.AllowHost)
	cc, err := grpc.NewClient("passthrough:///"+cfg.Target,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return dial(ctx, "tcp", addr) }),
		grpc.WithDisableServiceConfig(),
	)
	if err != nil {
		return nil, fmt.Errorf("loadgen: gRPC client for %s: %w", cfg.Target, err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	return resolveMethod(ctx, cc, cfg.Method, cfg.Request)
}

// send paces the calls: one goroutine per call, the clients taking them in turn, until the pacer
// ends the run; then it waits for every call and closes results.
func (l *GRPCLoad) send() {
	var wg sync.WaitGroup
	var slots chan struct{}
	if l.cfg.MaxInFlight > 0 {
		slots = make(chan struct{}, l.cfg.MaxInFlight)
	}
	defer func() {
		wg.Wait()
		close(l.results)
	}()
	for seq := uint64(0); ; seq++ {
		// The pacer blocks until the call is due; it returns at once for a late one.
		if _, stop := l.pacer.Pace(time.Since(l.start), seq); stop {
			return
		}
		if slots != nil {
			select {
			case slots <- struct{}{}:
			case <-l.pacer.stop:
				return
			}
		}
		l.sent.Add(1)
		cc := l.clients[seq%uint64(len(l.clients))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := l.call(seq, cc)
			if slots != nil {
				<-slots
			}
			l.results <- res
		}()
	}
}

// call makes one call with its own deadline: not the load's context, so that stopping the load lets
// calls in flight finish.
func (l *GRPCLoad) call(seq uint64, cc *grpc.ClientConn) grpcResult {
	c := &grpcCall{}
	start := time.Now() // before the deadline is set, so a call that hit it took at least the timeout
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), grpcCallKey{}, c), l.cfg.Timeout)
	defer cancel()
	resp := l.method.newResponse()
	err := cc.Invoke(ctx, l.method.name, l.method.request, resp)
	latency := time.Since(start)
	if err == nil && l.method.check != nil {
		err = l.method.check(resp)
	}
	return grpcResult{seq: seq, start: start, latency: latency, err: err, call: c}
}

// SetRate changes the rate from now on (dropping any phases still scheduled) and returns the rate it
// replaced.
func (l *GRPCLoad) SetRate(rate float64) float64 {
	prev := l.pacer.SetRate(rate)
	l.cfg.Logger.Info("gRPC load rate changed", "from", prev, "to", rate)
	return prev
}

// Rate is the rate in force now.
func (l *GRPCLoad) Rate() float64 { return l.pacer.current() }

// Sent is the number of calls issued so far.
func (l *GRPCLoad) Sent() uint64 { return l.sent.Load() }

// Counts returns the tally so far, as Load.Counts. Safe from any goroutine.
func (l *GRPCLoad) Counts() Counts {
	return Counts{
		Sent:      l.sent.Load(),
		Completed: l.completed.Load(),
		OK:        l.succeeded.Load(),
		Latency:   time.Duration(l.latency.Load()),
	}
}

// Stop ends the load: nothing more is sent, calls in flight complete (or reach their deadline) and
// are all recorded. Safe to call more than once and from any goroutine.
func (l *GRPCLoad) Stop() { l.stopOnce.Do(l.pacer.Stop) }

// Done is closed when the load has ended, every call is recorded and the connections are closed.
func (l *GRPCLoad) Done() <-chan struct{} { return l.done }

// Wait blocks until the load has ended and returns its report. The error is non-nil when calls were
// lost (ErrUnrecorded) or the request record could not be written.
func (l *GRPCLoad) Wait() (GRPCReport, error) {
	<-l.done
	return l.report, l.err
}

func (l *GRPCLoad) closeClients() {
	for _, cc := range l.clients {
		if err := cc.Close(); err != nil {
			l.cfg.Logger.Debug("close gRPC client", "err", err)
		}
	}
}

// grpcRecorder turns finished calls into timeline.Requests, windows, connection tallies and the
// report. It runs on one goroutine.
type grpcRecorder struct {
	cfg      GRPCConfig
	out      *bufio.Writer
	enc      *json.Encoder
	writeErr error
	windows  *windower
	seen     seqSet
	all      []time.Duration
	byConn   map[string]*GRPCConn // call tallies by local address
	report   GRPCReport
}

func (l *GRPCLoad) consume() {
	defer close(l.done)
	rec := &grpcRecorder{
		cfg:     l.cfg,
		windows: newWindower(l.cfg.Timeline, l.start, l.cfg.Timeout+windowGrace),
		byConn:  map[string]*GRPCConn{},
		report: GRPCReport{
			Target: l.cfg.Target, Method: l.cfg.Method, Start: l.start, T: l.cfg.Timeline.Since(l.start),
			Codes: map[string]uint64{}, Errors: map[timeline.ErrorClass]uint64{}, ByPod: map[string]uint64{},
		},
	}
	if l.cfg.Requests != nil {
		rec.out = bufio.NewWriterSize(l.cfg.Requests, 64*1024)
		rec.enc = json.NewEncoder(rec.out)
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	lastFlush := time.Now()
	for {
		select {
		case res, ok := <-l.results:
			if !ok {
				l.finish(rec)
				return
			}
			q := rec.record(res)
			l.latency.Add(int64(q.Latency))
			if q.OK() {
				l.succeeded.Add(1)
			}
			l.completed.Add(1)
		case now := <-tick.C:
			rec.windows.closeUntil(now)
			if now.Sub(lastFlush) >= time.Second {
				rec.flush()
				lastFlush = now
			}
		}
	}
}

func (rec *grpcRecorder) record(res grpcResult) timeline.Request {
	c := res.call
	c.mu.Lock()
	conn, connAt, first, answered, pod, bytes, attempts := c.conn, c.connAt, c.first, c.answered, c.pod, c.bytes, c.attempts
	c.mu.Unlock()
	q := timeline.Request{
		Seq:     res.seq,
		T:       rec.cfg.Timeline.Since(res.start),
		Start:   res.start,
		Latency: res.latency,
		Bytes:   bytes,
		Conn:    conn,
		ConnAt:  connAt,
		Pod:     pod,
		Reused:  conn != "" && !first,
		Retried: attempts > 1,
	}
	q.GRPC, q.Error, q.Detail = classifyGRPC(res.err, answered)
	if q.Pod != "" {
		q.PodFrom = timeline.PodFromHeader
	}
	if rec.enc != nil && rec.writeErr == nil {
		if err := rec.enc.Encode(q); err != nil {
			rec.writeErr = fmt.Errorf("write call %d: %w", q.Seq, err)
		}
	}
	if rec.enc == nil || rec.writeErr == nil {
		rec.report.Recorded++
		rec.seen.add(q.Seq)
	}
	if rec.cfg.OnRequest != nil {
		rec.cfg.OnRequest(q)
	}
	rec.windows.add(q, res.start)
	rec.all = append(rec.all, q.Latency)
	r := &rec.report
	if q.OK() {
		r.OK++
	} else {
		r.Failed++
	}
	r.Codes[q.GRPC]++
	if q.Error != timeline.ErrNone {
		r.Errors[q.Error]++
	}
	if q.Pod != "" {
		r.ByPod[q.Pod]++
	}
	if q.Reused {
		r.Reused++
	}
	if q.Retried {
		r.Retried++
	}
	if conn != "" {
		t := rec.byConn[conn]
		if t == nil {
			t = &GRPCConn{FirstCall: res.start, LastCall: res.start}
			rec.byConn[conn] = t
		}
		t.Calls++
		if res.start.Before(t.FirstCall) {
			t.FirstCall = res.start
		}
		if res.start.After(t.LastCall) {
			t.LastCall = res.start
		}
		if pod != "" {
			if t.Pods == nil {
				t.Pods = map[string]uint64{}
			}
			t.Pods[pod]++
		}
	}
	return q
}

func (rec *grpcRecorder) flush() {
	if rec.out != nil && rec.writeErr == nil {
		if err := rec.out.Flush(); err != nil {
			rec.writeErr = fmt.Errorf("flush calls: %w", err)
		}
	}
}

// finish runs once every call is recorded: it snapshots the connections (ClosedAt still says which
// ended while the load ran), closes the clients and writes the report.
func (l *GRPCLoad) finish(rec *grpcRecorder) {
	conns := l.conns.snapshot()
	l.closeClients()
	end := l.pacer.Ended()
	if end.IsZero() {
		end = time.Now()
	}
	rec.flush()
	rec.windows.closeAll(end)
	r := rec.report
	for i := range conns {
		if t := rec.byConn[conns[i].Local]; t != nil {
			conns[i].Calls, conns[i].FirstCall, conns[i].LastCall, conns[i].Pods = t.Calls, t.FirstCall, t.LastCall, t.Pods
		}
	}
	r.Conns = conns
	r.Sent = l.sent.Load()
	r.Duration = end.Sub(l.start)
	if r.Duration > 0 {
		r.Achieved = float64(r.Sent) / r.Duration.Seconds()
	}
	r.P50, r.P99 = percentile(rec.all, 0.50), percentile(rec.all, 0.99)
	r.Windows = rec.windows.next
	r.LateForWindow = rec.windows.late
	l.cfg.Timeline.Append(timeline.Entry{At: end, Kind: timeline.KindMark, Mark: &timeline.Mark{
		Name: "load-end", Detail: fmt.Sprintf("sent %d, recorded %d, ok %d, connections %d", r.Sent, r.Recorded, r.OK, len(r.Conns)),
	}})
	var errs []error
	if rec.writeErr != nil {
		errs = append(errs, rec.writeErr)
	}
	if r.Sent != r.Recorded || !rec.seen.complete(r.Sent) {
		errs = append(errs, fmt.Errorf("%w: sent %d, recorded %d (%d distinct sequence numbers below %d)",
			ErrUnrecorded, r.Sent, r.Recorded, rec.seen.countBelow(r.Sent), r.Sent))
	}
	if len(errs) > 0 {
		l.err = fmt.Errorf("loadgen gRPC %s: %w", l.cfg.Target, errors.Join(errs...))
	}
	l.report = r
	l.cfg.Logger.Info("gRPC load ended", "sent", r.Sent, "recorded", r.Recorded, "ok", r.OK,
		"achieved", fmt.Sprintf("%.1f/s", r.Achieved), "p99", r.P99, "connections", len(r.Conns), "err", l.err)
}
