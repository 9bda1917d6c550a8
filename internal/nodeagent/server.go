package nodeagent

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"syscall"
)

// Port is the port the node agent serves its API on.
const Port = 8090

// TokenHeader carries the run's token on every API request but /healthz: the agent's pod IP is
// reachable from other pods, the token keeps them from stopping processes.
const TokenHeader = "X-Probegate-Node-Token"

// TokenEnv is the environment variable the agent reads its token from.
const TokenEnv = "PROBEGATE_NODE_TOKEN"

// Result is every answer of the API: the process acted on or found, its state, the signal sent;
// Gone when the container or process asked about is not on the node.
type Result struct {
	PID int `json:"pid,omitempty"`
	// PIDs are every process of a container (/v1/container-procs), its main one first.
	PIDs   []int  `json:"pids,omitempty"`
	State  string `json:"state,omitempty"`
	Signal string `json:"signal,omitempty"`
	Gone   bool   `json:"gone,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Server is the node agent's API over one proc file system.
type Server struct {
	Procs Procs
	// Token, when set, must come in TokenHeader.
	Token string
	// Kill sends a signal (syscall.Kill when nil); Self is the agent's own pid (os.Getpid() when
	// 0), which it never signals.
	Kill func(pid int, sig syscall.Signal) error
	Self int
	Log  *slog.Logger
}

// Handler serves GET /healthz, GET /v1/container?id=ID (the container's main pid), GET
// /v1/container-procs?id=ID (every pid of the container, the main one first), GET /v1/state?pid=N, POST /v1/signal?pid=N&signal=STOP|CONT and POST
// /v1/host-signal?comm=NAME&signal=STOP|CONT (the one host process of that name). Malformed input
// is refused with 400, a missing or wrong token with 401, a name several host processes have with
// 409; a container or process that is not on the
// node is a 200 answer with gone set.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.Handle("GET /v1/container", s.guard(s.container))
	mux.Handle("GET /v1/container-procs", s.guard(s.containerProcs))
	mux.Handle("GET /v1/state", s.guard(s.state))
	mux.Handle("POST /v1/signal", s.guard(s.signal))
	mux.Handle("POST /v1/host-signal", s.guard(s.hostSignal))
	return mux
}

// badInput is an error of the request's own making (400).
type badInput struct{ error }

// guard checks the token, then answers with h's result or error.
func (s *Server) guard(h func(r *http.Request) (Result, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get(TokenHeader)), []byte(s.Token)) != 1 {
			http.Error(w, "missing or wrong "+TokenHeader, http.StatusUnauthorized)
			return
		}
		res, err := h(r)
		var bad badInput
		switch {
		case errors.Is(err, ErrGone):
			res = Result{PID: res.PID, Gone: true, Detail: err.Error()}
		case errors.Is(err, ErrAmbiguous):
			http.Error(w, err.Error(), http.StatusConflict)
			return
		case errors.As(err, &bad):
			http.Error(w, bad.Error(), http.StatusBadRequest)
			return
		case err != nil:
			s.logger().Error("node agent request failed", "path", r.URL.Path, "query", r.URL.RawQuery, "err", err)
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if res.Signal != "" && !res.Gone {
			s.logger().Info("signal sent", "pid", res.PID, "signal", res.Signal, "path", r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(res)
	})
}

func (s *Server) container(r *http.Request) (Result, error) {
	id := r.URL.Query().Get("id")
	if err := CheckContainerID(id); err != nil {
		return Result{}, badInput{err}
	}
	pid, err := s.Procs.ContainerInit(id)
	if err != nil {
		return Result{}, err
	}
	return Result{PID: pid}, nil
}

func (s *Server) containerProcs(r *http.Request) (Result, error) {
	id := r.URL.Query().Get("id")
	if err := CheckContainerID(id); err != nil {
		return Result{}, badInput{err}
	}
	pids, err := s.Procs.ContainerProcs(id)
	if err != nil {
		return Result{}, err
	}
	return Result{PID: pids[0], PIDs: pids}, nil
}

func (s *Server) state(r *http.Request) (Result, error) {
	pid, err := ParsePID(r.URL.Query().Get("pid"))
	if err != nil {
		return Result{}, badInput{err}
	}
	st, err := s.Procs.State(pid)
	return Result{PID: pid, State: st}, err
}

func (s *Server) signal(r *http.Request) (Result, error) {
	q := r.URL.Query()
	pid, err := ParsePID(q.Get("pid"))
	if err != nil {
		return Result{}, badInput{err}
	}
	return s.send(pid, q.Get("signal"))
}

func (s *Server) hostSignal(r *http.Request) (Result, error) {
	q := r.URL.Query()
	comm := q.Get("comm")
	if err := CheckComm(comm); err != nil {
		return Result{}, badInput{err}
	}
	if _, err := ParseSignal(q.Get("signal")); err != nil {
		return Result{}, badInput{err}
	}
	pid, err := s.Procs.HostProcess(comm)
	if err != nil {
		return Result{}, err
	}
	return s.send(pid, q.Get("signal"))
}

// send sends the named signal to pid, which must be another process than the agent.
func (s *Server) send(pid int, name string) (Result, error) {
	sig, err := ParseSignal(name)
	if err != nil {
		return Result{}, badInput{err}
	}
	self := s.Self
	if self == 0 {
		self = os.Getpid()
	}
	if pid == self {
		return Result{}, badInput{fmt.Errorf("pid %d is the node agent itself", pid)}
	}
	if !s.Procs.Exists(pid) {
		return Result{PID: pid}, fmt.Errorf("%w: no process %d", ErrGone, pid)
	}
	kill := s.Kill
	if kill == nil {
		kill = syscall.Kill
	}
	if err := kill(pid, sig); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return Result{PID: pid}, fmt.Errorf("%w: process %d exited", ErrGone, pid)
		}
		return Result{}, fmt.Errorf("send SIG%s to %d: %w", name, pid, err)
	}
	return Result{PID: pid, Signal: name}, nil
}

func (s *Server) logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
