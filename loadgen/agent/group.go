package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/loadgen"
)

// Transport reaches one agent's control API.
type Transport interface {
	// Do sends method to path (with its query) and body (nil for none) and returns the response
	// body; a status other than 2xx is an error.
	Do(ctx context.Context, method, path string, body []byte) (io.ReadCloser, error)
	// Name names the agent (its pod) in logs and errors.
	Name() string
}

// Config is the load a Group drives: Load.Rate is the total, split evenly over the agents;
// Load.TimelineStart is ignored (each agent gets the timeline's start in its own clock).
type Config struct {
	Load      StartRequest
	Timeline  *timeline.Timeline
	OnRequest func(timeline.Request) // called for every request as it arrives (optional)
	// Sources, when set, name each agent (by the transports' order) in its requests' Source.
	Sources []string
	Logger  *slog.Logger
}

// Group is load driven by several agents, recorded on one timeline.
type Group struct {
	cfg     Config
	members []*member
	start   time.Time
	log     *slog.Logger

	mu   sync.Mutex
	reqs []timeline.Request
	rate float64

	wg      sync.WaitGroup
	cancel  context.CancelFunc
	stopped sync.Once
}

type member struct {
	t      Transport
	source string
	offset time.Duration // agent clock − harness clock
	rtt    time.Duration // of the clock sample the offset comes from
	got    uint64        // requests read from its stream
	end    *End
	err    error
}

// clockSamples is how many round trips measure each agent's clock offset; the one with the
// shortest round trip is kept (its midpoint is the tightest bound on when the agent read its clock).
const clockSamples = 7

// Start measures each agent's clock offset, starts each on its share of the rate and streams their
// records. On any error the agents already started are stopped.
func Start(ctx context.Context, ts []Transport, cfg Config) (*Group, error) {
	if len(ts) == 0 {
		return nil, errors.New("agent: no agents to drive the load")
	}
	if cfg.Timeline == nil {
		return nil, errors.New("agent: a timeline is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	g := &Group{cfg: cfg, log: cfg.Logger, rate: cfg.Load.Rate}
	for i, t := range ts {
		m := &member{t: t}
		if i < len(cfg.Sources) {
			m.source = cfg.Sources[i]
		}
		off, rtt, err := measureOffset(ctx, t, clockSamples)
		if err != nil {
			return nil, fmt.Errorf("agent %s: clock: %w", t.Name(), err)
		}
		m.offset, m.rtt = off, rtt
		g.members = append(g.members, m)
	}
	// The streams outlive ctx (an interrupted run still collects what was sent), but not the load:
	// an agent that never ends its stream is given up on a minute after the load should have ended.
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if d := cfg.Load.Duration; d > 0 {
		streamCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), d+cfg.Load.Timeout+time.Minute)
	}
	g.cancel = cancel
	g.start = time.Now()
	share := cfg.Load
	share.Rate = cfg.Load.Rate / float64(len(ts))
	for i, m := range g.members {
		share.TimelineStart = cfg.Timeline.Start().Add(m.offset)
		body, _ := json.Marshal(share)
		if err := do(ctx, m.t, http.MethodPost, "/start", body, nil); err != nil {
			for _, started := range g.members[:i] {
				_ = do(context.WithoutCancel(ctx), started.t, http.MethodPost, "/stop", nil, nil)
			}
			cancel()
			return nil, fmt.Errorf("agent %s: start: %w", m.t.Name(), err)
		}
	}
	offsets := make([]string, len(g.members))
	for i, m := range g.members {
		offsets[i] = fmt.Sprintf("%s %+v (±%v)", m.t.Name(), m.offset.Round(time.Microsecond), (m.rtt / 2).Round(time.Microsecond))
	}
	cfg.Timeline.Append(timeline.Entry{At: g.start, Kind: timeline.KindMark, Mark: &timeline.Mark{
		Name: "load-start", Detail: fmt.Sprintf("GET %s %g/s from %d in-cluster agents; clock offsets %s",
			cfg.Load.URL, cfg.Load.Rate, len(ts), strings.Join(offsets, ", ")),
	}})
	g.log.Info("in-cluster load started", "url", cfg.Load.URL, "rate", cfg.Load.Rate, "agents", len(ts), "offsets", offsets)
	for _, m := range g.members {
		g.wg.Add(1)
		go g.stream(streamCtx, m)
	}
	go func() {
		select {
		case <-ctx.Done():
			g.Stop()
		case <-streamCtx.Done():
		}
	}()
	return g, nil
}

// measureOffset samples the agent's clock n times and returns the offset (agent − harness) of the
// sample with the shortest round trip, and that round trip.
func measureOffset(ctx context.Context, t Transport, n int) (offset, rtt time.Duration, err error) {
	rtt = -1
	for range n {
		var got struct{ Now time.Time }
		t0 := time.Now()
		if err := do(ctx, t, http.MethodGet, "/clock", nil, &got); err != nil {
			return 0, 0, err
		}
		t1 := time.Now()
		if d := t1.Sub(t0); rtt < 0 || d < rtt {
			rtt = d
			offset = got.Now.Sub(t0.Add(d / 2))
		}
	}
	return offset, rtt, nil
}

// streamRetry is how long a broken record stream waits before it is resumed where it broke.
const streamRetry = 500 * time.Millisecond

// stream reads m's records until its End line, resuming after a broken stream from the last
// request read; the requests' start times are moved to the harness's clock.
func (g *Group) stream(ctx context.Context, m *member) {
	defer g.wg.Done()
	for {
		err := g.readStream(ctx, m)
		if err == nil || ctx.Err() != nil {
			if err == nil {
				return
			}
			g.mu.Lock()
			m.err = fmt.Errorf("agent %s: record stream ended before the load did (%d requests read): %w", m.t.Name(), m.got, err)
			g.mu.Unlock()
			return
		}
		g.log.Warn("agent record stream broke; resuming", "agent", m.t.Name(), "read", m.got, "err", err)
		select {
		case <-time.After(streamRetry):
		case <-ctx.Done():
		}
	}
}

func (g *Group) readStream(ctx context.Context, m *member) error {
	body, err := m.t.Do(ctx, http.MethodGet, "/records?from="+strconv.FormatUint(m.got, 10), nil)
	if err != nil {
		return err
	}
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var line Line
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return fmt.Errorf("record line %d: %w", m.got+1, err)
		}
		switch {
		case line.End != nil:
			g.mu.Lock()
			m.end = line.End
			g.mu.Unlock()
			return nil
		case line.Request != nil:
			q := *line.Request
			q.Start = q.Start.Add(-m.offset)
			if !q.ConnAt.IsZero() {
				q.ConnAt = q.ConnAt.Add(-m.offset)
			}
			q.Source = m.source
			g.mu.Lock()
			g.reqs = append(g.reqs, q)
			m.got++
			g.mu.Unlock()
			if g.cfg.OnRequest != nil {
				g.cfg.OnRequest(q)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// SetRate sets the total rate, split over the agents, and returns the previous total.
func (g *Group) SetRate(rate float64) float64 {
	g.mu.Lock()
	prev := g.rate
	g.rate = rate
	g.mu.Unlock()
	share := strconv.FormatFloat(rate/float64(len(g.members)), 'f', -1, 64)
	for _, m := range g.members {
		if err := do(context.Background(), m.t, http.MethodPost, "/rate?r="+share, nil, nil); err != nil {
			g.log.Warn("agent rate not changed", "agent", m.t.Name(), "err", err)
		}
	}
	return prev
}

// Stop ends every agent's load early; it is safe to call more than once.
func (g *Group) Stop() {
	g.stopped.Do(func() {
		for _, m := range g.members {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := do(ctx, m.t, http.MethodPost, "/stop", nil, nil); err != nil {
				g.log.Warn("agent not stopped", "agent", m.t.Name(), "err", err)
			}
			cancel()
		}
	})
}

// Counts sums the agents' tallies so far.
func (g *Group) Counts() loadgen.Counts {
	var sum loadgen.Counts
	for _, m := range g.members {
		var c loadgen.Counts
		if err := do(context.Background(), m.t, http.MethodGet, "/counts", nil, &c); err != nil {
			g.log.Warn("agent counts not read", "agent", m.t.Name(), "err", err)
			continue
		}
		sum.Sent += c.Sent
		sum.Completed += c.Completed
		sum.OK += c.OK
		sum.Latency += c.Latency
	}
	return sum
}

// Requests returns a copy of the requests read so far, in arrival order.
func (g *Group) Requests() []timeline.Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.reqs)
}

// Wait blocks until every agent's stream has ended and returns every request, ordered by start
// and numbered anew (Seq) across the agents. It fails when an agent's load failed, or when what an
// agent sent, what it recorded and what reached the harness differ.
func (g *Group) Wait() ([]timeline.Request, error) {
	g.wg.Wait()
	g.cancel()
	end := time.Now()
	g.mu.Lock()
	reqs := g.reqs
	g.mu.Unlock()
	slices.SortStableFunc(reqs, func(a, b timeline.Request) int { return a.Start.Compare(b.Start) })
	for i := range reqs {
		reqs[i].Seq = uint64(i)
		if e := reqs[i].Start.Add(reqs[i].Latency); e.After(end) {
			end = e
		}
	}
	var errs []error
	var sent uint64
	for _, m := range g.members {
		switch {
		case m.err != nil:
			errs = append(errs, m.err)
		case m.end == nil:
			errs = append(errs, fmt.Errorf("agent %s: no end of its record stream", m.t.Name()))
		default:
			sent += m.end.Sent
			if m.end.Error != "" {
				errs = append(errs, fmt.Errorf("agent %s: %s", m.t.Name(), m.end.Error))
			}
			if m.end.Sent != m.end.Recorded || m.end.Recorded != m.got {
				errs = append(errs, fmt.Errorf("agent %s: %w: sent %d, recorded %d, received %d",
					m.t.Name(), loadgen.ErrUnrecorded, m.end.Sent, m.end.Recorded, m.got))
			}
		}
	}
	if len(reqs) > 0 {
		loadgen.AppendWindows(g.cfg.Timeline, g.start, reqs[len(reqs)-1].Start, reqs) // sorted by start
	}
	g.cfg.Timeline.Append(timeline.Entry{At: end, Kind: timeline.KindMark, Mark: &timeline.Mark{
		Name: "load-end", Detail: fmt.Sprintf("%d agents: sent %d, received %d", len(g.members), sent, len(reqs)),
	}})
	return reqs, errors.Join(errs...)
}

// do sends one control request and decodes a JSON answer into out when out is not nil.
func do(ctx context.Context, t Transport, method, path string, body []byte, out any) error {
	rc, err := t.Do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer rc.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, rc)
		return err
	}
	return json.NewDecoder(rc).Decode(out)
}

// HTTPTransport reaches an agent at a base URL (tests, and agents reachable directly).
type HTTPTransport struct {
	Base   string
	Client *http.Client
	Label  string
}

// Name implements Transport.
func (h HTTPTransport) Name() string {
	if h.Label != "" {
		return h.Label
	}
	return h.Base
}

// Do implements Transport.
func (h HTTPTransport) Do(ctx context.Context, method, path string, body []byte) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, method, h.Base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	c := h.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(msg)))
	}
	return resp.Body, nil
}
