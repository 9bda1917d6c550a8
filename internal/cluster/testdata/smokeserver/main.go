// Command smokeserver is the cluster smoke test's workload: a tiny HTTP server built into a FROM
// scratch image. /healthz fails once LIVENESS_FAIL_AFTER has passed; /resolve looks a name up
// through the cluster DNS; /whoami names the pod and the caller's address; /fetch?url= GETs a URL
// (the multi-node test points it at other pods, inside the cluster) and returns its status and
// body; SIGTERM keeps serving for DRAIN_DELAY before exiting.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	start := time.Now()
	failAfter, _ := time.ParseDuration(os.Getenv("LIVENESS_FAIL_AFTER"))
	drain, _ := time.ParseDuration(os.Getenv("DRAIN_DELAY"))
	pod, _ := os.Hostname()

	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Probegate-Pod", pod)
		fmt.Fprintln(w, "ok", pod)
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ready") })
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if failAfter > 0 && time.Since(start) > failAfter {
			http.Error(w, "failing on purpose", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "live")
	})
	mux.HandleFunc("/resolve", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		addrs, err := net.DefaultResolver.LookupHost(ctx, r.URL.Query().Get("name"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		fmt.Fprintln(w, addrs[0])
	})
	mux.HandleFunc("/whoami", func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		fmt.Fprintln(w, pod, host)
	})
	mux.HandleFunc("/fetch", func(w http.ResponseWriter, r *http.Request) {
		c := http.Client{Timeout: 3 * time.Second}
		resp, err := c.Get(r.URL.Query().Get("url"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		fmt.Fprintf(w, "%d %s", resp.StatusCode, body)
	})
	srv := &http.Server{Addr: ":8080", Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		time.Sleep(drain)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
