package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/probegate/probegate/internal/timeline"
)

// windowGrace is added to the request timeout before a second's window is closed.
const windowGrace = time.Second

// ErrUnrecorded means some requests that were sent were not recorded: the run's data is incomplete.
var ErrUnrecorded = errors.New("requests sent != requests recorded")

// Load is a running load. Start it with Start; end it with Stop or let its bounds end it; Wait for
// the Report.
type Load struct {
	cfg      Config
	pacer    *phasedPacer
	attacker *vegeta.Attacker
	start    time.Time
	sent     atomic.Uint64
	// completed, succeeded and latency tally the recorded requests for Counts.
	completed atomic.Uint64
	succeeded atomic.Uint64
	latency   atomic.Int64 // summed, in nanoseconds
	done      chan struct{}
	stopOnce  sync.Once
	// conns carries each request's connection from the transport to the recorder.
	conns *connTable

	report Report
	err    error
}

// Report sums up a finished run.
type Report struct {
	URL   string        `json:"url"`
	Start time.Time     `json:"start"`
	T     time.Duration `json:"t"` // the load's start as an offset from the timeline's start
	// Duration runs from the start to the moment the load stopped sending.
	Duration time.Duration `json:"duration"`
	// Sent counts requests vegeta issued; Recorded counts requests that reached the record (the JSON
	// Lines writer, when there is one). They must be equal.
	Sent     uint64 `json:"sent"`
	Recorded uint64 `json:"recorded"`
	OK       uint64 `json:"ok"`
	Failed   uint64 `json:"failed"`
	Reused   uint64 `json:"reused"`  // requests that went over a kept-alive connection
	Retried  uint64 `json:"retried"` // requests the transport resent after a kept-alive connection broke
	// Achieved is Sent ÷ Duration in requests per second.
	Achieved float64                        `json:"achieved"`
	P50      time.Duration                  `json:"p50"`
	P99      time.Duration                  `json:"p99"`
	Errors   map[timeline.ErrorClass]uint64 `json:"errors,omitempty"`
	ByPod    map[string]uint64              `json:"byPod,omitempty"`
	Windows  int                            `json:"windows"`
	// LateForWindow counts requests that completed after their second's window had been written;
	// they are in the request record but not in that window.
	LateForWindow int `json:"lateForWindow,omitempty"`
}

// Run starts a load and waits for it to end (by its bounds, ctx, or Stop from another goroutine).
func Run(ctx context.Context, cfg Config) (Report, error) {
	l, err := Start(ctx, cfg)
	if err != nil {
		return Report{}, err
	}
	return l.Wait()
}

// Start validates cfg and starts the load. Cancelling ctx stops it (results in flight are kept).
func Start(ctx context.Context, cfg Config) (*Load, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	l := &Load{
		cfg:   cfg,
		pacer: newPhasedPacer(cfg.Phases, cfg.Duration, cfg.Count),
		done:  make(chan struct{}),
		conns: &connTable{},
	}
	opts := []func(*vegeta.Attacker){
		vegeta.Client(newClient(cfg.Timeout, cfg.NewConnectionPerRequest, cfg.AllowHost, cfg.Clients, l.conns)),
		vegeta.Redirects(vegeta.NoFollow),
	}
	if cfg.MaxWorkers > 0 {
		opts = append(opts, vegeta.MaxWorkers(cfg.MaxWorkers), vegeta.Workers(min(cfg.MaxWorkers, vegeta.DefaultWorkers)))
	}
	l.attacker = vegeta.NewAttacker(opts...)
	method, url, header := cfg.Method, cfg.URL, cfg.Header
	targeter := func(t *vegeta.Target) error {
		l.sent.Add(1)
		t.Method, t.URL, t.Header = method, url, header // vegeta copies the header into each request
		return nil
	}
	l.start = time.Now()
	results := l.attacker.Attack(targeter, l.pacer, 0, "probegate")
	cfg.Timeline.Append(timeline.Entry{At: l.start, Kind: timeline.KindMark, Mark: &timeline.Mark{
		Name: "load-start", Detail: fmt.Sprintf("%s %s %s", cfg.Method, cfg.URL, describePhases(cfg.Phases)),
	}})
	cfg.Logger.Info("load started", "url", cfg.URL, "phases", describePhases(cfg.Phases),
		"duration", cfg.Duration, "count", cfg.Count, "keepAlive", !cfg.NewConnectionPerRequest)

	go func() {
		select {
		case <-ctx.Done():
			l.Stop()
		case <-l.done:
		}
	}()
	go l.consume(results)
	return l, nil
}

// SetRate changes the rate from now on (dropping any phases still scheduled) and returns the rate it
// replaced. It is the hook the overload fault raises the load through.
func (l *Load) SetRate(rate float64) float64 {
	prev := l.pacer.SetRate(rate)
	l.cfg.Logger.Info("load rate changed", "from", prev, "to", rate)
	return prev
}

// Rate is the rate in force now.
func (l *Load) Rate() float64 { return l.pacer.current() }

// Sent is the number of requests issued so far.
func (l *Load) Sent() uint64 { return l.sent.Load() }

// Counts is a running load's tally so far. Sent counts requests issued; Completed those that have
// completed and been recorded, OK the successful ones among them, and Latency their summed latency.
// Two snapshots taken a few seconds apart give the achieved rate and what the target did meanwhile.
type Counts struct {
	Sent      uint64
	Completed uint64
	OK        uint64
	Latency   time.Duration
}

// Counts returns the tally so far. It is safe to call from any goroutine while the load runs.
func (l *Load) Counts() Counts {
	return Counts{
		Sent:      l.sent.Load(),
		Completed: l.completed.Load(),
		OK:        l.succeeded.Load(),
		Latency:   time.Duration(l.latency.Load()),
	}
}

// Stop ends the load: nothing more is sent, requests in flight complete (or time out) and are all
// recorded. Safe to call more than once and from any goroutine.
func (l *Load) Stop() {
	l.stopOnce.Do(func() {
		l.pacer.Stop()
		l.attacker.Stop()
	})
}

// Done is closed when the load has ended and every request is recorded.
func (l *Load) Done() <-chan struct{} { return l.done }

// Wait blocks until the load has ended and returns its report. The error is non-nil when requests
// were lost (ErrUnrecorded) or the request record could not be written.
func (l *Load) Wait() (Report, error) {
	<-l.done
	return l.report, l.err
}

// recorder turns vegeta results into timeline.Requests, windows and the report.
type recorder struct {
	cfg      Config
	conns    *connTable
	out      *bufio.Writer
	enc      *json.Encoder
	writeErr error
	windows  *windower
	seen     seqSet
	all      []time.Duration
	report   Report
}

func (l *Load) consume(results <-chan *vegeta.Result) {
	defer close(l.done)
	rec := &recorder{
		cfg:     l.cfg,
		conns:   l.conns,
		windows: newWindower(l.cfg.Timeline, l.start, l.cfg.Timeout+windowGrace),
		report: Report{
			URL: l.cfg.URL, Start: l.start, T: l.cfg.Timeline.Since(l.start),
			Errors: map[timeline.ErrorClass]uint64{}, ByPod: map[string]uint64{},
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
		case res, ok := <-results:
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

func (rec *recorder) record(res *vegeta.Result) timeline.Request {
	q := timeline.Request{
		Seq:     res.Seq,
		T:       rec.cfg.Timeline.Since(res.Timestamp),
		Start:   res.Timestamp,
		Latency: res.Latency,
		Status:  int(res.Code),
		Bytes:   res.BytesIn,
	}
	conn := rec.conns.take(res.Seq)
	q.Conn, q.ConnAt = conn.local, conn.opened
	q.Error = classify(q.Status, res.Error)
	if q.Error != timeline.ErrNone && q.Error != timeline.ErrHTTP5xx && q.Error != timeline.ErrHTTPOther {
		q.Detail = trimURL(res.Error)
	}
	if res.Headers != nil {
		if !rec.cfg.IgnorePodHeader {
			q.Pod = res.Headers.Get(rec.cfg.PodHeader)
		}
		if q.Pod != "" {
			q.PodFrom = timeline.PodFromHeader
		}
		q.Reused = res.Headers.Get(connHeader) == "reused"
		if n, err := strconv.Atoi(res.Headers.Get(attemptsHeader)); err == nil && n > 1 {
			q.Retried = true
		}
	}
	if rec.enc != nil && rec.writeErr == nil {
		if err := rec.enc.Encode(q); err != nil {
			rec.writeErr = fmt.Errorf("write request %d: %w", q.Seq, err)
		}
	}
	if rec.enc == nil || rec.writeErr == nil {
		rec.report.Recorded++
		rec.seen.add(q.Seq)
	}
	if rec.cfg.OnRequest != nil {
		rec.cfg.OnRequest(q)
	}
	rec.windows.add(q, res.Timestamp)
	rec.all = append(rec.all, q.Latency)
	if q.OK() {
		rec.report.OK++
	} else {
		rec.report.Failed++
	}
	if q.Error != timeline.ErrNone {
		rec.report.Errors[q.Error]++
	}
	if q.Pod != "" {
		rec.report.ByPod[q.Pod]++
	}
	if q.Reused {
		rec.report.Reused++
	}
	if q.Retried {
		rec.report.Retried++
	}
	return q
}

func (rec *recorder) flush() {
	if rec.out != nil && rec.writeErr == nil {
		if err := rec.out.Flush(); err != nil {
			rec.writeErr = fmt.Errorf("flush requests: %w", err)
		}
	}
}

func (l *Load) finish(rec *recorder) {
	end := l.pacer.Ended()
	if end.IsZero() {
		end = time.Now()
	}
	rec.flush()
	rec.windows.closeAll(end)
	r := rec.report
	r.Sent = l.sent.Load()
	r.Duration = end.Sub(l.start)
	if r.Duration > 0 {
		r.Achieved = float64(r.Sent) / r.Duration.Seconds()
	}
	r.P50, r.P99 = percentile(rec.all, 0.50), percentile(rec.all, 0.99)
	r.Windows = rec.windows.next
	r.LateForWindow = rec.windows.late
	l.cfg.Timeline.Append(timeline.Entry{At: end, Kind: timeline.KindMark, Mark: &timeline.Mark{
		Name: "load-end", Detail: fmt.Sprintf("sent %d, recorded %d, ok %d", r.Sent, r.Recorded, r.OK),
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
		l.err = fmt.Errorf("loadgen %s: %w", l.cfg.URL, errors.Join(errs...))
	}
	l.report = r
	l.cfg.Logger.Info("load ended", "sent", r.Sent, "recorded", r.Recorded, "ok", r.OK,
		"achieved", fmt.Sprintf("%.1f/s", r.Achieved), "p99", r.P99, "err", l.err)
}

// trimURL drops the `Get "http://…": ` prefix net/http puts on transport errors.
func trimURL(s string) string {
	if i := strings.Index(s, `": `); i >= 0 && strings.Contains(s[:i], `"http`) {
		return s[i+3:]
	}
	return s
}

func describePhases(ps []Phase) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%g/s", p.Rate)
		if p.For > 0 {
			parts[i] += " for " + p.For.String()
		}
	}
	return strings.Join(parts, ", then ")
}

// seqSet is a bitset of the sequence numbers recorded, to prove none is missing or doubled.
type seqSet struct {
	bits  []uint64
	dupes int
}

func (s *seqSet) add(seq uint64) {
	i := seq / 64
	for uint64(len(s.bits)) <= i {
		s.bits = append(s.bits, 0)
	}
	if s.bits[i]&(1<<(seq%64)) != 0 {
		s.dupes++
	}
	s.bits[i] |= 1 << (seq % 64)
}

func (s *seqSet) countBelow(n uint64) uint64 {
	var c uint64
	for seq := uint64(0); seq < n; seq++ {
		if i := seq / 64; i < uint64(len(s.bits)) && s.bits[i]&(1<<(seq%64)) != 0 {
			c++
		}
	}
	return c
}

// complete reports whether exactly the sequence numbers 0..n-1 were seen, each once.
func (s *seqSet) complete(n uint64) bool { return s.dupes == 0 && s.countBelow(n) == n }
