// Package agent runs load from inside the cluster: an agent (cmd/probegate-agent, one per pod)
// drives a share of the rate with package loadgen and streams every request it records back to the
// harness, which reconciles the agents' clocks with its own and merges their records into one
// timeline (Group). The harness reaches each agent through the API server's pod proxy, so nothing
// but the API server needs to be reachable from where probegate runs.
package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/loadgen"
)

// Port is the port an agent serves its control API on.
const Port = 8089

// DefaultImage is the agent's image, built by hack/images.sh (probegate/agent).
const DefaultImage = "probegate/agent:dev"

// StartRequest is the load an agent is asked to drive. TimelineStart is the harness timeline's
// start in the agent's own clock, so request offsets (Request.T) come out on the harness's timeline.
type StartRequest struct {
	URL             string        `json:"url"`
	AllowHost       string        `json:"allowHost,omitempty"`
	Rate            float64       `json:"rate"`
	Duration        time.Duration `json:"duration"`
	Timeout         time.Duration `json:"timeout"`
	KeepAlive       bool          `json:"keepAlive"`
	Clients         int           `json:"clients,omitempty"`
	PodHeader       string        `json:"podHeader,omitempty"`
	IgnorePodHeader bool          `json:"ignorePodHeader,omitempty"`
	TimelineStart   time.Time     `json:"timelineStart"`
}

// Line is one line of an agent's record stream: a request, or the end of the load (last line).
type Line struct {
	Request *timeline.Request `json:"r,omitempty"`
	End     *End              `json:"end,omitempty"`
}

// End closes a record stream: what the agent's load sent and recorded, and its error if any.
type End struct {
	Sent     uint64 `json:"sent"`
	Recorded uint64 `json:"recorded"`
	Error    string `json:"error,omitempty"`
}

// Server is one agent: it runs at most one load and keeps every request it records until the
// harness has read them.
type Server struct {
	log *slog.Logger

	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever recs or end change
	load    *loadgen.Load
	recs    []timeline.Request
	end     *End
}

// NewServer returns an idle agent.
func NewServer(log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{log: log, changed: make(chan struct{})}
}

// Handler serves the control API: GET /clock, POST /start, POST /rate?r=R, POST /stop,
// GET /counts and GET /records?from=N.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /clock", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]time.Time{"now": time.Now()})
	})
	mux.HandleFunc("POST /start", s.start)
	mux.HandleFunc("POST /rate", s.rate)
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, _ *http.Request) {
		if l := s.current(); l != nil {
			l.Stop()
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /records", s.records)
	mux.HandleFunc("GET /counts", func(w http.ResponseWriter, _ *http.Request) {
		var c loadgen.Counts
		if l := s.current(); l != nil {
			c = l.Counts()
		}
		writeJSON(w, c)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return mux
}

func (s *Server) current() *loadgen.Load {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.load
}

func (s *Server) start(w http.ResponseWriter, r *http.Request) {
	var req StartRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad start request: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.load != nil {
		http.Error(w, "a load was already started on this agent", http.StatusConflict)
		return
	}
	cfg := loadgen.Config{
		URL: req.URL, AllowHost: req.AllowHost, Rate: req.Rate, Duration: req.Duration, Timeout: req.Timeout,
		NewConnectionPerRequest: !req.KeepAlive, Clients: req.Clients, PodHeader: req.PodHeader,
		IgnorePodHeader: req.IgnorePodHeader, Timeline: timeline.New(req.TimelineStart), Logger: s.log,
		OnRequest: s.add,
	}
	// The load outlives this request: it ends by its duration or POST /stop.
	l, err := loadgen.Start(context.WithoutCancel(r.Context()), cfg)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.load = l
	go s.finish(l)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) add(q timeline.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, q)
	s.notify()
}

func (s *Server) finish(l *loadgen.Load) {
	rep, err := l.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.end = &End{Sent: rep.Sent, Recorded: uint64(len(s.recs))}
	if err != nil {
		s.end.Error = err.Error()
	}
	s.log.Info("load ended", "sent", rep.Sent, "recorded", len(s.recs), "err", err)
	s.notify()
}

// notify wakes the record streams; s.mu is held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) rate(w http.ResponseWriter, r *http.Request) {
	rate, err := strconv.ParseFloat(r.URL.Query().Get("r"), 64)
	if err != nil || rate < 0 {
		http.Error(w, "want ?r=<requests per second>", http.StatusBadRequest)
		return
	}
	l := s.current()
	if l == nil {
		http.Error(w, "no load is running", http.StatusConflict)
		return
	}
	writeJSON(w, map[string]float64{"previous": l.SetRate(rate)})
}

// records streams the recorded requests from index ?from= on, one JSON line each, as they come,
// and ends with the End line once the load has ended and every request has been written.
func (s *Server) records(w http.ResponseWriter, r *http.Request) {
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	w.Header().Set("Content-Type", "application/jsonl")
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	for {
		s.mu.Lock()
		batch := append([]timeline.Request(nil), s.recs[min(from, len(s.recs)):]...)
		end, changed := s.end, s.changed // once end is set, recs is complete
		s.mu.Unlock()
		for i := range batch {
			if err := enc.Encode(Line{Request: &batch[i]}); err != nil {
				return
			}
		}
		from += len(batch)
		if end != nil {
			_ = enc.Encode(Line{End: end})
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-changed:
		case <-time.After(250 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		http.Error(w, fmt.Sprintf("encode: %v", err), http.StatusInternalServerError)
	}
}
