package loadgen

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/probegate/probegate/internal/timeline"
)

// grpcServer is a real grpc-go server on 127.0.0.1 whose every answer names pod in the pod header;
// it notes the client address of every call it served.
type grpcServer struct {
	*grpc.Server
	addr string
	pod  string

	mu      sync.Mutex
	remotes map[string]int // client address → calls
}

// startGRPCServer serves on lis (a new 127.0.0.1 port when nil) with the services register adds.
func startGRPCServer(t *testing.T, lis net.Listener, pod string, register func(*grpc.Server)) *grpcServer {
	t.Helper()
	if lis == nil {
		var err error
		if lis, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	s := &grpcServer{addr: lis.Addr().String(), pod: pod, remotes: map[string]int{}}
	s.Server = grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if p, ok := peer.FromContext(ctx); ok {
			s.mu.Lock()
			s.remotes[p.Addr.String()]++
			s.mu.Unlock()
		}
		if err := grpc.SetHeader(ctx, metadata.Pairs(DefaultPodHeader, pod)); err != nil {
			return nil, err
		}
		return h(ctx, req)
	}))
	register(s.Server)
	go s.Serve(lis) //nolint:errcheck // ends with Stop
	t.Cleanup(s.Stop)
	return s
}

func withHealth(st healthpb.HealthCheckResponse_ServingStatus) func(*grpc.Server) {
	return func(s *grpc.Server) {
		h := health.NewServer()
		h.SetServingStatus("", st)
		healthpb.RegisterHealthServer(s, h)
	}
}

func runGRPC(t *testing.T, ctx context.Context, cfg GRPCConfig) (GRPCReport, []timeline.Request, error) {
	t.Helper()
	if cfg.Timeline == nil {
		cfg.Timeline = timeline.New(time.Now())
	}
	var buf bytes.Buffer
	cfg.Requests = &buf
	rep, err := RunGRPC(ctx, cfg)
	reqs, lerr := timeline.LoadRequests(&buf)
	if lerr != nil {
		t.Fatalf("read back calls: %v", lerr)
	}
	return rep, reqs, err
}

// TestGRPCHealthLoadPacedAndRecorded runs the default health check at 100/s for 2 s over one
// connection: every call is recorded OK with its pod and connection, the calls are spread evenly
// over the seconds, and the connection summary matches what the server saw.
func TestGRPCHealthLoadPacedAndRecorded(t *testing.T) {
	srv := startGRPCServer(t, nil, "pod-a", withHealth(healthpb.HealthCheckResponse_SERVING))
	tl := timeline.New(time.Now())
	rep, reqs, err := runGRPC(t, context.Background(), GRPCConfig{Target: srv.addr, Rate: 100, Duration: 2 * time.Second, Timeline: tl})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != 200 || rep.Recorded != 200 || len(reqs) != 200 || rep.OK != 200 {
		t.Fatalf("sent %d, recorded %d, lines %d, ok %d; want 200 each", rep.Sent, rep.Recorded, len(reqs), rep.OK)
	}
	// The bounds leave a loaded host (CI runs the unit tests beside a cluster's create) a tenth of
	// the rate and a few calls spilling past the 2 s: the pacing is still shown.
	if rep.Achieved < 85 || rep.Achieved > 105 || rep.Duration < 1990*time.Millisecond || rep.Duration > 2300*time.Millisecond {
		t.Fatalf("achieved %.1f/s over %v; want 100/s over 2 s", rep.Achieved, rep.Duration)
	}
	if rep.Method != HealthCheckMethod || rep.Codes["OK"] != 200 || rep.ByPod["pod-a"] != 200 {
		t.Fatalf("method %q, codes %v, by pod %v", rep.Method, rep.Codes, rep.ByPod)
	}
	perSecond := [3]int{}
	for _, q := range reqs {
		if !q.OK() || q.GRPC != "OK" || q.Status != 0 || q.Error != timeline.ErrNone || q.Latency <= 0 {
			t.Fatalf("call %+v: want OK", q)
		}
		if q.Pod != "pod-a" || q.PodFrom != timeline.PodFromHeader || q.Conn == "" {
			t.Fatalf("call %d: pod %q from %q, conn %q", q.Seq, q.Pod, q.PodFrom, q.Conn)
		}
		perSecond[min(q.Start.Sub(rep.Start)/time.Second, 2)]++
	}
	if perSecond[0] < 90 || perSecond[1] < 90 || perSecond[2] > 10 {
		t.Fatalf("calls started per second: %v; want about 100, 100, 0", perSecond)
	}
	if len(rep.Conns) != 1 {
		t.Fatalf("connections %+v; want 1", rep.Conns)
	}
	c := rep.Conns[0]
	srv.mu.Lock()
	served := srv.remotes[c.Local]
	srv.mu.Unlock()
	if c.Calls != 200 || served != 200 || c.Remote != srv.addr || c.Client != 0 || !c.ClosedAt.IsZero() {
		t.Fatalf("connection %+v: want 200 calls from %s (server saw %d from it), still open", c, srv.addr, served)
	}
	if c.OpenedAt.Before(rep.Start) || c.FirstCall.After(c.OpenedAt) || !c.LastCall.After(c.FirstCall) || c.Pods["pod-a"] != 200 {
		t.Fatalf("connection %+v: opened after the first call started, calls in order, pinned to pod-a", c)
	}
	if rep.Reused != 199 {
		t.Fatalf("reused %d; want 199 (every call but the connection's first)", rep.Reused)
	}
	var windows []timeline.LoadWindow
	for _, e := range tl.Entries() {
		if e.Kind == timeline.KindLoad {
			windows = append(windows, *e.Load)
		}
	}
	// Two full windows, and a third only for the few calls a late start pushed past 2 s.
	if n := len(windows); n < 2 || n > 3 || rep.Windows != n || n == 3 && windows[2].Sent > 10 {
		t.Fatalf("windows on the timeline %+v, report says %d; want 2 (a third of a few late calls at most)", windows, rep.Windows)
	}
	for i, w := range windows {
		if w.OK != w.Sent || i < 2 && w.Sent < 90 {
			t.Fatalf("window %d %+v", i, w)
		}
	}
}

// TestGRPCClientsEachHoldAConnection: three clients share the calls in turn, one connection each.
func TestGRPCClientsEachHoldAConnection(t *testing.T) {
	srv := startGRPCServer(t, nil, "pod-a", withHealth(healthpb.HealthCheckResponse_SERVING))
	rep, reqs, err := runGRPC(t, context.Background(), GRPCConfig{Target: srv.addr, Rate: 200, Count: 90, Clients: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Every call is dated by its connection's opening, as the conntrack attribution matches flows.
	opened := map[string]time.Time{}
	for _, c := range rep.Conns {
		opened[c.Local] = c.OpenedAt
	}
	for _, q := range reqs {
		if at, ok := opened[q.Conn]; !ok || q.ConnAt.IsZero() || !q.ConnAt.Equal(at) {
			t.Fatalf("call %d on %s: connAt %v, the connection opened %v (known %v)", q.Seq, q.Conn, q.ConnAt, at, ok)
		}
	}
	if len(rep.Conns) != 3 || rep.OK != 90 || rep.Reused != 87 {
		t.Fatalf("connections %+v, ok %d, reused %d; want 3 connections, 90 OK, 87 reused", rep.Conns, rep.OK, rep.Reused)
	}
	clients := map[int]bool{}
	for _, c := range rep.Conns {
		clients[c.Client] = true
		if c.Calls != 30 {
			t.Fatalf("connection %+v: want 30 calls", c)
		}
	}
	if len(clients) != 3 {
		t.Fatalf("connections opened by clients %v; want 0, 1 and 2", clients)
	}
}

// scriptedHealth answers Check by the service asked about: each name is a failure mode.
type scriptedHealth struct {
	healthpb.UnimplementedHealthServer
}

func (scriptedHealth) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	switch req.GetService() {
	case "unavailable":
		return nil, status.Error(codes.Unavailable, "shedding")
	case "exhausted":
		return nil, status.Error(codes.ResourceExhausted, "over quota")
	case "slow":
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
		}
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// TestGRPCStatusClasses: what the server answers (or fails to answer in time) sets each call's
// status code name and class.
func TestGRPCStatusClasses(t *testing.T) {
	notServing := startGRPCServer(t, nil, "pod-a", withHealth(healthpb.HealthCheckResponse_NOT_SERVING))
	scripted := startGRPCServer(t, nil, "pod-b", func(s *grpc.Server) { healthpb.RegisterHealthServer(s, scriptedHealth{}) })
	for _, tc := range []struct {
		name, addr, service string
		code                string
		class               timeline.ErrorClass
		pod                 string
	}{
		{"not serving", notServing.addr, "", "OK", timeline.ErrNotServing, "pod-a"},
		{"unknown service", notServing.addr, "nosuch", "NOT_FOUND", timeline.ErrGRPCOther, "pod-a"},
		{"unavailable", scripted.addr, "unavailable", "UNAVAILABLE", timeline.ErrGRPCServer, "pod-b"},
		{"resource exhausted", scripted.addr, "exhausted", "RESOURCE_EXHAUSTED", timeline.ErrGRPCOther, "pod-b"},
		{"past the deadline", scripted.addr, "slow", "DEADLINE_EXCEEDED", timeline.ErrTimeout, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, reqs, err := runGRPC(t, context.Background(), GRPCConfig{
				Target: tc.addr, Service: tc.service, Rate: 50, Count: 5, Timeout: 200 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Failed != 5 || rep.Errors[tc.class] != 5 || rep.Codes[tc.code] != 5 {
				t.Fatalf("failed %d, errors %v, codes %v; want 5 %s (%s)", rep.Failed, rep.Errors, rep.Codes, tc.code, tc.class)
			}
			for _, q := range reqs {
				if q.OK() || q.GRPC != tc.code || q.Error != tc.class || q.Class() != tc.class || q.Pod != tc.pod || q.Conn == "" {
					t.Fatalf("call %+v: want %s, class %s, pod %q, with its connection", q, tc.code, tc.class, tc.pod)
				}
				// The latency clock starts before the deadline is set (failed once in CI at 199.77 ms
				// when it started after).
				if tc.class == timeline.ErrTimeout && (q.Latency < 200*time.Millisecond || q.Latency > 900*time.Millisecond) {
					t.Fatalf("call %d took %v; want the 200 ms deadline", q.Seq, q.Latency)
				}
			}
		})
	}
}

// TestGRPCGracefulStopMovesCallsToANewConnection: a server's GracefulStop mid-load sends GOAWAY; the
// client's connection ends and later calls go over a new one, to the server that took its place.
func TestGRPCGracefulStopMovesCallsToANewConnection(t *testing.T) {
	first := startGRPCServer(t, listenReusePort(t, "127.0.0.1:0"), "old", withHealth(healthpb.HealthCheckResponse_SERVING))
	l, err := StartGRPC(context.Background(), GRPCConfig{Target: first.addr, Rate: 100, Duration: 2500 * time.Millisecond, Timeline: timeline.New(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	// The server taking over listens on the same port before the first one stops, as a restarted
	// pod behind a Service would be there already: the client's reconnection finds it at once.
	startGRPCServer(t, listenReusePort(t, first.addr), "new", withHealth(healthpb.HealthCheckResponse_SERVING))
	stopAt := time.Now()
	go first.GracefulStop()
	rep, err := l.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Conns) != 2 {
		t.Fatalf("connections %+v; want the old and a new one", rep.Conns)
	}
	old, next := rep.Conns[0], rep.Conns[1]
	if old.ClosedAt.IsZero() || old.ClosedAt.Before(stopAt) || len(old.Pods) != 1 || old.Pods["old"] != old.Calls || old.Calls < 90 {
		t.Fatalf("old connection %+v: want ~100 calls, all served by the old server, ended after the stop at %v", old, stopAt)
	}
	if !next.OpenedAt.After(stopAt) || !next.ClosedAt.IsZero() || len(next.Pods) != 1 || next.Pods["new"] != next.Calls || next.Calls < 140 {
		t.Fatalf("new connection %+v: want it opened after the stop at %v, open, serving the rest", next, stopAt)
	}
	if next.Local == old.Local || rep.OK != 250 || rep.Sent != 250 || rep.Recorded != 250 || rep.Reused != 248 {
		t.Fatalf("ok %d of %d sent (%d recorded, %d reused, %d retried); errors %v; want every call OK, two new", rep.OK, rep.Sent, rep.Recorded, rep.Reused, rep.Retried, rep.Errors)
	}
	t.Logf("old connection %d calls, new %d; %d calls retried transparently", old.Calls, next.Calls, rep.Retried)
}

// listenReusePort listens on addr with SO_REUSEPORT, so that a second server can bind the same port.
func listenReusePort(t *testing.T, addr string) net.Listener {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	lis, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return lis
}

// TestGRPCHardStopFailsUnavailable: a server that stops without draining leaves the client calling
// a closed port: the calls fail UNAVAILABLE, classed refused (or reset, when cut in flight).
func TestGRPCHardStopFailsUnavailable(t *testing.T) {
	srv := startGRPCServer(t, nil, "pod-a", withHealth(healthpb.HealthCheckResponse_SERVING))
	// Stop closes the listener and the connection while the load goes on: a call started before
	// Stop returned may still have been served, one started after it cannot be.
	stopped := make(chan time.Time, 1)
	time.AfterFunc(time.Second, func() { srv.Stop(); stopped <- time.Now() })
	rep, reqs, err := runGRPC(t, context.Background(), GRPCConfig{Target: srv.addr, Rate: 100, Duration: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stopAt := <-stopped
	refused := 0
	for _, q := range reqs {
		if q.OK() {
			if q.Start.After(stopAt) {
				t.Fatalf("call %d started %v after the stop returned, yet OK", q.Seq, q.Start.Sub(stopAt))
			}
			continue
		}
		if q.GRPC != "UNAVAILABLE" || (q.Error != timeline.ErrRefused && q.Error != timeline.ErrReset) {
			t.Fatalf("call %+v: want UNAVAILABLE, refused or reset", q)
		}
		if q.Error == timeline.ErrRefused {
			refused++
		}
	}
	if rep.OK < 90 || rep.OK > 110 || refused < 80 || rep.Failed+rep.OK != 200 {
		t.Fatalf("ok %d, failed %d (%d refused), errors %v; want ~100 OK then refused", rep.OK, rep.Failed, refused, rep.Errors)
	}
	if len(rep.Conns) != 1 || rep.Conns[0].ClosedAt.IsZero() {
		t.Fatalf("connections %+v; want the one, ended by the stop", rep.Conns)
	}
}

// testService answers UnaryCall with response_size bytes, and fails a request without the payload
// the test sends, to show the JSON request arrived.
type testService struct {
	testpb.UnimplementedTestServiceServer
}

func (testService) UnaryCall(_ context.Context, req *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	if string(req.GetPayload().GetBody()) != "hi" {
		return nil, status.Errorf(codes.InvalidArgument, "payload %q", req.GetPayload().GetBody())
	}
	return &testpb.SimpleResponse{Payload: &testpb.Payload{Body: make([]byte, req.GetResponseSize())}}, nil
}

// TestGRPCMethodFromReflection calls an arbitrary unary method with a JSON request, its types
// learnt from the server's reflection service; unknown methods and a server without reflection are
// refused before any load, each with one line.
func TestGRPCMethodFromReflection(t *testing.T) {
	srv := startGRPCServer(t, nil, "pod-a", func(s *grpc.Server) {
		testpb.RegisterTestServiceServer(s, testService{})
		reflection.Register(s)
	})
	rep, reqs, err := runGRPC(t, context.Background(), GRPCConfig{
		Target: srv.addr, Method: "/grpc.testing.TestService/UnaryCall",
		Request: `{"responseSize": 7, "payload": {"body": "aGk="}}`, Rate: 100, Count: 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK != 20 || len(rep.Conns) != 1 {
		t.Fatalf("ok %d, codes %v, connections %d; want 20 OK over one connection", rep.OK, rep.Codes, len(rep.Conns))
	}
	for _, q := range reqs {
		if q.Bytes < 7 {
			t.Fatalf("call %+v: want the 7-byte payload back", q)
		}
	}

	plain := startGRPCServer(t, nil, "pod-a", func(s *grpc.Server) { testpb.RegisterTestServiceServer(s, testService{}) })
	for _, tc := range []struct{ addr, method, request, want string }{
		{srv.addr, "/grpc.testing.TestService/NoSuch", "", "service grpc.testing.TestService has no method NoSuch"},
		{srv.addr, "/grpc.testing.NoSuchService/UnaryCall", "", "the server has no service grpc.testing.NoSuchService"},
		{srv.addr, "/grpc.testing.TestService/StreamingOutputCall", "", "only unary methods"},
		{srv.addr, "/grpc.testing.TestService/UnaryCall", `{"nosuch": 1}`, "request message (grpc.testing.SimpleRequest)"},
		{plain.addr, "/grpc.testing.TestService/UnaryCall", "", "does not serve grpc.reflection.v1"},
		{srv.addr, "grpc.testing.TestService/UnaryCall", "", "want /package.Service/Method"},
	} {
		_, err := StartGRPC(context.Background(), GRPCConfig{Target: tc.addr, Method: tc.method, Request: tc.request, Rate: 1, Count: 1, Timeline: timeline.New(time.Now())})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %s: error %v; want one line with %q", tc.method, tc.request, err, tc.want)
		}
	}
}

// TestGRPCRefusesNonLoopbackTargets: only loopback IP literals (and the allowed address) are dialled.
func TestGRPCRefusesNonLoopbackTargets(t *testing.T) {
	tl := timeline.New(time.Now())
	for _, target := range []string{"10.1.2.3:9999", "localhost:9999", "example.invalid:9999", "127.0.0.1"} {
		_, err := StartGRPC(context.Background(), GRPCConfig{Target: target, Rate: 1, Count: 1, Timeline: tl})
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), target) {
			t.Errorf("target %s: error %v; want one line naming it", target, err)
		}
	}
	_, err := StartGRPC(context.Background(), GRPCConfig{Target: "10.1.2.3:9999", Rate: 1, Count: 1, Timeline: tl})
	if err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("error %v; want it to say the host is not loopback", err)
	}
	if err := CheckGRPCTarget("10.1.2.3:9999", "10.1.2.3"); err != nil {
		t.Errorf("the allowed address is refused: %v", err)
	}
}

// TestGRPCCancelStopsCleanly: cancelling the context ends a long load at once, every call sent is
// recorded, and no goroutine is left behind.
func TestGRPCCancelStopsCleanly(t *testing.T) {
	srv := startGRPCServer(t, nil, "pod-a", withHealth(healthpb.HealthCheckResponse_SERVING))
	// A first run starts whatever grpc-go keeps for the process's lifetime.
	if _, _, err := runGRPC(t, context.Background(), GRPCConfig{Target: srv.addr, Rate: 10, Count: 1}); err != nil {
		t.Fatal(err)
	}
	before := steadyGoroutines()
	ctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan time.Time, 1)
	time.AfterFunc(500*time.Millisecond, func() { cancelled <- time.Now(); cancel() })
	began := time.Now()
	rep, _, err := runGRPC(t, ctx, GRPCConfig{Target: srv.addr, Rate: 100, Duration: time.Minute, Clients: 4})
	if err != nil {
		t.Fatal(err)
	}
	// No more calls than 100/s until the cancel (however late a loaded host ran it), a few to spare.
	most := uint64(100*(<-cancelled).Sub(began).Seconds()) + 5
	if took := time.Since(began); took > 2*time.Second || rep.Sent < 20 || rep.Sent > most || rep.Recorded != rep.Sent || rep.OK != rep.Sent {
		t.Fatalf("took %v, sent %d, recorded %d, ok %d; want to stop after ~50 calls, all recorded", took, rep.Sent, rep.Recorded, rep.OK)
	}
	if after := settledGoroutines(before); after > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines before the load, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

// steadyGoroutines returns the goroutine count once it is the same twice 50 ms apart.
func steadyGoroutines() int {
	n := runtime.NumGoroutine()
	for range 40 {
		time.Sleep(50 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			break
		}
		n = m
	}
	return n
}

// settledGoroutines waits up to 3 s for the goroutine count to drop to target and returns it.
func settledGoroutines(target int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && n > target; n = runtime.NumGoroutine() {
		time.Sleep(20 * time.Millisecond)
	}
	return n
}
