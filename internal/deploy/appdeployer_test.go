package deploy

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/probegate/probegate/internal/scenario"
)

// A fresh cluster has none of the images: toxiproxy must be loaded with the app's own whenever it
// is interposed on a dependency (a pull would go to a registry, which is never reachable).
func TestImagesToLoadIncludeTheInterposedToxiproxy(t *testing.T) {
	app := &App{Images: []string{"shop/web:1"}}
	if got := imagesToLoad(app); !slices.Equal(got, []string{"shop/web:1"}) {
		t.Errorf("no dependency: %v", got)
	}
	app.Dependencies = []AppDependency{{Dependency: scenario.Dependency{Name: "db"}}}
	if got := imagesToLoad(app); !slices.Equal(got, []string{"shop/web:1", DefaultToxiproxyImage}) {
		t.Errorf("with a dependency: %v", got)
	}
	if len(app.Images) != 1 {
		t.Errorf("the app's own list changed: %v", app.Images)
	}
}

// TestAnswersGRPCWantsAServer: a listener that accepts but speaks no gRPC (Docker's proxy with
// nothing behind it) is not ready; a gRPC server is, with or without the health service.
func TestAnswersGRPCWantsAServer(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { // accept and close at once, as a proxy with no backend does
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	url := "http://" + lis.Addr().String()
	if ok, note, err := answersGRPC(url)(context.Background()); ok || err != nil || !strings.Contains(note, "gRPC health check") {
		t.Errorf("accepting, no server: ok %v, note %q, err %v", ok, note, err)
	}
	lis.Close()
	for _, withHealth := range []bool{true, false} {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer()
		if withHealth {
			healthpb.RegisterHealthServer(srv, health.NewServer())
		}
		go srv.Serve(lis)
		ok, note, err := answersGRPC("http://" + lis.Addr().String())(context.Background())
		srv.Stop()
		if !ok || err != nil {
			t.Errorf("server (health %v): ok %v, note %q, err %v", withHealth, ok, note, err)
		}
	}
}
