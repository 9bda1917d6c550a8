package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"k8s.io/client-go/rest"

	"github.com/probegate/probegate/internal/pause"
	"github.com/probegate/probegate/internal/timeline"
)

// TypeStall blocks the target's worker loop on one pod.
const TypeStall = "stall"

func init() {
	Register(Definition{
		Type: TypeStall,
		Doc:  "blocks the target's worker loop on one pod through its admin endpoint, so its heartbeat stops while the process stays up",
		Params: []Param{
			podParam,
			{Name: "d", Kind: KindDuration, Doc: "stall length (default: the fault's duration, else 5s)"},
		},
		Needs:    []Capability{NeedsAdminEndpoint},
		Proof:    "the heartbeat age the pod's /admin/state reports",
		Explains: []timeline.RestartCause{timeline.CauseLiveness},
		Build: func(a Args) (Fault, error) {
			if a.Env.Config == nil {
				return nil, fmt.Errorf("stall: no REST config to port-forward with")
			}
			d := a.Duration("d", a.Spec.Duration)
			if d == 0 {
				d = 5 * time.Second
			}
			st := NewStall(a.Rec, a.Pods, a.Env.AdminPort, d, RESTForwarder(a.Env.Config))
			if a.Env.StallPath != "" {
				st.Path = a.Env.StallPath
			}
			return st, nil
		},
	})
}

// Forwarder opens a local address that reaches port of a pod (PortForward, or a fake in tests).
type Forwarder func(ctx context.Context, namespace, pod string, port int) (addr string, stop func(), err error)

// RESTForwarder is the Forwarder that port-forwards through the API server.
func RESTForwarder(cfg *rest.Config) Forwarder {
	return func(ctx context.Context, namespace, pod string, port int) (string, func(), error) {
		return PortForward(ctx, cfg, namespace, pod, port)
	}
}

// Stall blocks the target's worker loop on one pod for a duration (POST /admin/stall?d=… on its
// admin port, reached by port-forwarding to that pod), so its heartbeat stops while the process stays
// up: liveness should fail and restart it. Proof of effect: the heartbeat age /admin/state reports.
// The stall cannot be cut short; it ends by itself after For (or with the process).
type Stall struct {
	Recorder
	state
	Choice    PodChoice
	AdminPort int
	// Path is POSTed to with ?d=DURATION (DefaultStallPath when empty).
	Path    string
	For     time.Duration
	Forward Forwarder
	// ObserveAfter is how long after the stall starts its effect is read (2s, at most For/2, when 0).
	ObserveAfter time.Duration

	pod   string
	until time.Time
}

// DefaultStallPath is the fixture's stall endpoint.
const DefaultStallPath = "/admin/stall"

// NewStall returns the stall fault.
func NewStall(rec Recorder, choice PodChoice, adminPort int, d time.Duration, fw Forwarder) *Stall {
	rec.Type = TypeStall
	return &Stall{Recorder: rec, Choice: choice, AdminPort: adminPort, For: d, Forward: fw}
}

// Type implements Fault.
func (s *Stall) Type() string { return TypeStall }

// Pod is the stalled pod ("" before Inject).
func (s *Stall) Pod() string { return s.pod }

// SetLoad gives the pod choice the running load (for "busiest").
func (s *Stall) SetLoad(l RateSetter) { s.Choice.SetLoad(l) }

// Inject stalls one pod's worker loop.
func (s *Stall) Inject(ctx context.Context) error {
	if !s.begin(true) {
		s.end(true)
		return nil
	}
	pod, err := s.Choice.Choose(ctx)
	if err != nil {
		s.end(false)
		return fmt.Errorf("stall: %w", err)
	}
	path := s.Path
	if path == "" {
		path = DefaultStallPath
	}
	body, status, err := s.admin(ctx, pod.Name, http.MethodPost, path+"?d="+s.For.String())
	if err != nil {
		s.end(false)
		return fmt.Errorf("stall pod %s: %w", pod.Name, err)
	}
	if status != http.StatusAccepted {
		s.end(false)
		return fmt.Errorf("stall pod %s: admin answered %d: %s", pod.Name, status, body)
	}
	s.pod, s.until = pod.Name, time.Now().Add(s.For)
	s.record(timeline.FaultInject, pod.Name, pod.Name, fmt.Sprintf("POST %s?d=%s on port %d", path, s.For, s.AdminPort),
		map[string]string{"d": s.For.String()})
	s.end(true)

	wait := s.ObserveAfter
	if wait <= 0 {
		wait = min(2*time.Second, s.For/2)
	}
	if err := pause.For(ctx, wait); err != nil {
		s.proof(s.pod, s.pod, timeline.PhaseDuring, false,
			fmt.Sprintf("heartbeat not read: the run was cancelled within the %s wait after the stall began", wait), map[string]string{"error": err.Error()})
		return nil
	}
	s.observe(ctx, true)
	return nil
}

// Revert records the end of the stall (it ends by itself) and observes the heartbeat again.
func (s *Stall) Revert(ctx context.Context) error {
	if !s.begin(false) {
		s.end(false)
		return nil
	}
	detail := "the stall ends by itself (no cancel endpoint)"
	if left := time.Until(s.until); left > 0 {
		detail = fmt.Sprintf("the stall cannot be cut short: it ends by itself in %s", left.Round(time.Millisecond))
	}
	s.record(timeline.FaultRevert, s.pod, s.pod, detail, map[string]string{"d": s.For.String()})
	s.end(false)
	s.observe(ctx, false)
	return nil
}

// adminState is the part of the target's /admin/state the stall reads.
type adminState struct {
	HeartbeatAgeMs float64 `json:"heartbeat_age_ms"`
	Live           bool    `json:"live"`
	LiveReason     string  `json:"live_reason"`
}

func (s *Stall) observe(ctx context.Context, active bool) {
	body, status, err := s.admin(ctx, s.pod, http.MethodGet, "/admin/state")
	params := map[string]string{}
	if err != nil || status != http.StatusOK {
		if err == nil {
			err = fmt.Errorf("status %d", status)
		}
		params["error"] = err.Error()
		s.proof(s.pod, s.pod, phase(active), false, "read /admin/state: "+err.Error(), params)
		return
	}
	var st adminState
	if err := json.Unmarshal(body, &st); err != nil {
		params["error"] = err.Error()
		s.proof(s.pod, s.pod, phase(active), false, "decode /admin/state: "+err.Error(), params)
		return
	}
	params["heartbeat_age_ms"] = strconv.FormatFloat(st.HeartbeatAgeMs, 'f', 0, 64)
	params["live"] = strconv.FormatBool(st.Live)
	// During the stall the heartbeat must be older than the time we waited; after, fresh again.
	stalled := st.HeartbeatAgeMs >= 900 || !st.Live
	s.proof(s.pod, s.pod, phase(active), stalled == active,
		fmt.Sprintf("heartbeat age %.0f ms, live=%v %s", st.HeartbeatAgeMs, st.Live, st.LiveReason), params)
}

func (s *Stall) admin(ctx context.Context, pod, method, path string) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addr, stop, err := s.Forward(ctx, s.Choice.Namespace, pod, s.AdminPort)
	if err != nil {
		return nil, 0, err
	}
	defer stop()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := adminClient.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
	return body, resp.StatusCode, err
}

// adminClient talks to port-forwarded loopback addresses only; environment proxies are ignored.
var adminClient = &http.Client{Transport: &http.Transport{Proxy: nil}}
