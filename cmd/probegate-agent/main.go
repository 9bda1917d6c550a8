// Command probegate-agent drives a share of probegate's load from inside the cluster: it serves
// the control API of package loadgen/agent on :8089 and runs at most one load, which the harness
// starts, steers and reads through the API server's pod proxy.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/probegate/probegate/loadgen/agent"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv := &http.Server{
		Addr:              fmt.Sprintf(":%d", agent.Port),
		Handler:           agent.NewServer(log).Handler(),
		ReadHeaderTimeout: 10 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("probegate agent listening", "addr", srv.Addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("agent stopped", "err", err)
		os.Exit(1)
	}
}
