package runner

import (
	"context"
	"log/slog"
	"os"

	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/observers/routing"
)

// routingEnv set to "off" skips the routing watch (verdicts then use the oracle's propagation
// allowance, as on a cluster whose node cannot be reached).
const routingEnv = "PROBEGATE_ROUTING"

// routeWatch records when kube-proxy changed its routing of the target Service (package
// observers/routing). A nil *routeWatch does nothing.
type routeWatch struct {
	w   *routing.Watcher
	log *slog.Logger
}

// startRouting starts the routing watch when the node can be reached (kind). It never fails the
// run: without it, "after withdrawal" verdicts fall back to the propagation allowance.
func (r *Runner) startRouting(ctx context.Context, t *deploy.Target, log *slog.Logger) *routeWatch {
	if os.Getenv(routingEnv) == "off" || r.kit.nodeExec == nil || t.Service == "" {
		return nil
	}
	w, err := routing.Start(ctx, routing.Exec(r.kit.nodeExec), t.Namespace, t.Service, 0, log)
	if err != nil {
		log.Warn("no routing watch: verdicts use the propagation allowance for kube-proxy", "err", err)
		return nil
	}
	return &routeWatch{w: w, log: log}
}

// record stops the watch and appends one timeline entry per routing change, naming the pod that
// had the address then. A watch that read nothing records nothing.
func (rw *routeWatch) record(tl *timeline.Timeline) {
	if rw == nil {
		return
	}
	snaps, err := rw.w.Stop()
	if err != nil {
		rw.log.Warn("routing watch", "err", err)
	}
	if len(snaps) == 0 {
		return
	}
	book := timeline.Addresses(tl.Entries())
	for _, c := range routing.Changes(snaps) {
		t := tl.Since(c.At)
		e := timeline.Entry{At: c.At, T: t, Kind: timeline.KindRouting, Pod: book.PodAt(c.Addr, t),
			Routing: &timeline.RoutingChange{Address: c.Addr.String(), Routed: c.Routed}}
		if !c.Since.IsZero() {
			e.Routing.Since = tl.Since(c.Since)
		}
		tl.Append(e)
	}
}

// stop ends the watch if record did not.
func (rw *routeWatch) stop() {
	if rw != nil {
		rw.w.Stop()
	}
}
