// Command probeserver is the observers' integration-test workload: an HTTP server whose liveness and
// readiness answers the test flips through the apiserver's pod proxy.
//
//	GET /livez, /readyz       200, or 503 once failed (readiness also while draining)
//	GET /fail?probe=liveness  make /livez fail from now on (readiness likewise)
//
// On SIGTERM it fails readiness, waits DRAIN (default 2s) and exits 0.
package main

import (
	"context"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	var liveFail, readyFail, draining atomic.Bool
	mux := http.NewServeMux()
	answer := func(w http.ResponseWriter, bad bool) {
		if bad {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("failing\n"))
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	}
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) { answer(w, liveFail.Load()) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { answer(w, readyFail.Load() || draining.Load()) })
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("probe") {
		case "liveness":
			liveFail.Store(true)
		case "readiness":
			readyFail.Store(true)
		default:
			http.Error(w, "probe must be liveness or readiness", http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte("failing " + r.URL.Query().Get("probe") + "\n"))
	})
	srv := &http.Server{Addr: ":8080", Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	draining.Store(true)
	drain := 2 * time.Second
	if d, err := time.ParseDuration(os.Getenv("DRAIN")); err == nil {
		drain = d
	}
	time.Sleep(drain)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
}
