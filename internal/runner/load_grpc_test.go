package runner

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/reports"
)

// healthServer is a real gRPC server on 127.0.0.1 serving the health service (and reflection),
// naming pod in the x-pod metadata of every answer; it returns the target's base URL.
func healthServer(t *testing.T, pod string) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if err := grpc.SetHeader(ctx, metadata.Pairs("x-pod", pod)); err != nil {
			return nil, err
		}
		return h(ctx, req)
	}))
	hs := health.NewServer()
	hs.SetServingStatus("shop", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	reflection.Register(s)
	go s.Serve(lis) //nolint:errcheck // ends with Stop
	t.Cleanup(s.Stop)
	return "http://" + lis.Addr().String()
}

// Every registered protocol is one the target file can name, and every one it can name is
// registered: the registry is the one place the runner learns a protocol.
func TestLoadProtocolsFollowTheTargetFile(t *testing.T) {
	if got := strings.Join(loadProtocolNames(), ","); got != scenario.LoadGRPC+","+scenario.LoadHTTP {
		t.Errorf("registered load protocols %s", got)
	}
	if _, err := (hostLoad{}).Start(context.Background(), loadSpec{URL: "http://127.0.0.1:1/", Protocol: "h3"}, timeline.New(time.Now())); err == nil ||
		err.Error() != "no h3 load: the load speaks grpc, http" {
		t.Errorf("unknown protocol: %v", err)
	}
}

// The host load speaks HTTP to a target that names no protocol, as before.
func TestHostLoadDefaultsToHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	run, err := hostLoad{}.Start(context.Background(), loadSpec{URL: srv.URL + "/", Rate: 20, Duration: 500 * time.Millisecond, KeepAlive: true, Timeout: time.Second}, timeline.New(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := run.Wait()
	if err != nil || len(reqs) == 0 || reqs[0].Status != 200 || reqs[0].GRPC != "" {
		t.Fatalf("err %v, %d requests, first %+v", err, len(reqs), reqs)
	}
	if _, ok := run.(connectionRun); ok {
		t.Errorf("an HTTP load lists connections: the report would show HTTP ones as gRPC's")
	}
}

// A gRPC target's load makes its health check over one connection per client, whatever keepAlive
// says, each call on the timeline with its status, pod and connection (dated by its opening), and
// lists the connections with the pod each was pinned to.
func TestHostLoadSpeaksGRPC(t *testing.T) {
	base := healthServer(t, "web-0")
	tl := timeline.New(time.Now())
	run, err := hostLoad{}.Start(context.Background(), loadSpec{
		URL: base + "/", Protocol: scenario.LoadGRPC, GRPC: &scenario.GRPCCall{Method: scenario.GRPCHealthCheck, Service: "shop"},
		Rate: 60, Duration: time.Second, KeepAlive: false, Timeout: time.Second, Clients: 3, PodHeader: "X-Pod",
	}, tl)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := run.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) < 50 {
		t.Fatalf("%d calls recorded for 60/s × 1 s", len(reqs))
	}
	for _, q := range reqs {
		if q.GRPC != "OK" || !q.OK() || q.Pod != "web-0" || q.Conn == "" || q.ConnAt.IsZero() {
			t.Fatalf("call %+v", q)
		}
	}
	if _, ok := run.(faults.LoadMeter); !ok {
		t.Errorf("%T does not report its tally (faults.LoadMeter): overload could not prove its effect", run)
	}
	if _, ok := run.(faults.PodTally); !ok {
		t.Errorf("%T does not count calls by pod (faults.PodTally)", run)
	}
	c, ok := run.(connectionRun)
	if !ok {
		t.Fatalf("%T lists no connections", run)
	}
	conns := reports.PinConnections(c.Connections(), reqs)
	if len(conns) != 3 {
		t.Fatalf("%d connections for 3 clients with keepAlive false: %+v", len(conns), conns)
	}
	var calls uint64
	for _, cn := range conns {
		calls += cn.Calls
		if cn.Pod != "web-0" || cn.Pods["web-0"] != cn.Calls {
			t.Errorf("connection %+v: want all its calls on web-0", cn)
		}
	}
	if calls != uint64(len(reqs)) {
		t.Errorf("connections carry %d calls, %d recorded", calls, len(reqs))
	}
}

// A method the live server does not serve is found when the load starts (by reflection): the
// scenario's error is one line naming it.
func TestGRPCLoadUnknownMethodIsOneLine(t *testing.T) {
	base := healthServer(t, "web-0")
	_, err := hostLoad{}.Start(context.Background(), loadSpec{
		URL: base + "/", Protocol: scenario.LoadGRPC, GRPC: &scenario.GRPCCall{Method: "/shop.v1.Cart/Get", Request: `{"id": 7}`},
		Rate: 10, Duration: time.Second, Timeout: time.Second,
	}, timeline.New(time.Now()))
	if err == nil || !strings.Contains(err.Error(), "/shop.v1.Cart/Get") || !strings.Contains(err.Error(), "no service shop.v1.Cart") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v; want one line naming the method the server lacks", err)
	}
	_, err = hostLoad{}.Start(context.Background(), loadSpec{
		URL: base + "/", Protocol: scenario.LoadGRPC, GRPC: &scenario.GRPCCall{Method: "/grpc.health.v1.Health/Nope"},
		Rate: 10, Duration: time.Second, Timeout: time.Second,
	}, timeline.New(time.Now()))
	if err == nil || !strings.Contains(err.Error(), "has no method Nope") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v; want one line naming the method the service lacks", err)
	}
}
