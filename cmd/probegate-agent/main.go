// Command probegate-agent is probegate's in-cluster agent, in one of two modes:
//
//   - the load agent (the default) drives a share of probegate's load from inside the cluster: it
//     serves the control API of package loadgen/agent on :8089 and runs at most one load, which
//     the harness starts, steers and reads through the API server's pod proxy;
//   - the node agent (-node), run privileged in the host's PID namespace by a DaemonSet, serves the
//     API of package internal/nodeagent on :8090: it finds, stops and resumes processes on its node
//     for node-level faults (freeze) on any cluster. Its token comes from $PROBEGATE_NODE_TOKEN.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/probegate/probegate/internal/nodeagent"
	"github.com/probegate/probegate/loadgen/agent"
)

func main() {
	node := flag.Bool("node", false, "serve the node agent's API (privileged, host PID namespace) instead of the load agent's")
	proc := flag.String("proc", "/proc", "with -node: the proc file system to read")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv := &http.Server{Addr: fmt.Sprintf(":%d", agent.Port), Handler: agent.NewServer(log).Handler(), ReadHeaderTimeout: 10 * time.Second}
	what := "probegate load agent"
	if *node {
		token := os.Getenv(nodeagent.TokenEnv)
		if token == "" {
			log.Error("node agent: $" + nodeagent.TokenEnv + " is empty: refusing to serve without a token")
			os.Exit(2)
		}
		na := &nodeagent.Server{Procs: nodeagent.Procs{Root: *proc}, Token: token, Log: log}
		srv.Addr, srv.Handler, what = fmt.Sprintf(":%d", nodeagent.Port), na.Handler(), "probegate node agent"
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info(what+" listening", "addr", srv.Addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("agent stopped", "err", err)
		os.Exit(1)
	}
}
