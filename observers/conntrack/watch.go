package conntrack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/probegate/probegate/observers/nodeproc"
)

// Exec runs a command in the node container and returns its stdout (cluster.Cluster.NodeExec).
type Exec = nodeproc.Exec

// stopTimeout bounds the table listing Stop runs in the node.
const stopTimeout = 20 * time.Second

// Watcher streams conntrack's NEW events for connections to one NodePort of the node.
type Watcher struct {
	exec    Exec
	service netip.AddrPort
	proc    *nodeproc.Proc
	log     *slog.Logger
	once    sync.Once
}

// Start begins streaming `conntrack -E` in the node for TCP connections to service (the node's IP
// and the target's NodePort). It returns once the stream is running.
func Start(ctx context.Context, exec Exec, service netip.AddrPort, log *slog.Logger) (*Watcher, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pid := nodeproc.PidFile(fmt.Sprintf("conntrack-%d", service.Port()))
	script := fmt.Sprintf("echo $$ > %s; exec timeout %d conntrack -E -e NEW -p tcp --orig-dst %s --orig-port-dst %d -o timestamp -b 8388608",
		pid, int(nodeproc.MaxRun.Seconds()), service.Addr(), service.Port())
	// Events before the stream subscribes are found by Stop's table listing.
	proc, err := nodeproc.Start(ctx, exec, "conntrack -E for "+service.String(), pid, script)
	if err != nil {
		return nil, err
	}
	log.Info("conntrack watch started", "service", service.String())
	return &Watcher{exec: exec, service: service, proc: proc, log: log}, nil
}

// List returns the flows the node's table holds for the NodePort now (open connections and
// those recently closed), without stopping the stream: what a running scenario can attribute
// its requests so far by.
func (w *Watcher) List(ctx context.Context) ([]Flow, error) {
	out, err := w.exec(ctx, "conntrack", "-L", "-p", "tcp", "--orig-dst", w.service.Addr().String(),
		"--orig-port-dst", strconv.Itoa(int(w.service.Port())))
	if err != nil {
		return nil, fmt.Errorf("list conntrack flows for %s: %w", w.service, err)
	}
	flows, bad, perr := ParseOutput(string(out))
	if perr != nil {
		return flows, fmt.Errorf("%d unreadable conntrack lines: %w", bad, perr)
	}
	return flows, nil
}

// Stop ends the stream and returns every flow it saw plus those still in the node's table for the
// NodePort (connections opened before the stream subscribed, or events the kernel dropped). It is
// safe to call more than once; later calls return nil.
func (w *Watcher) Stop() ([]Flow, error) {
	var flows []Flow
	var errs []error
	w.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		list, lerr := w.exec(ctx, "conntrack", "-L", "-p", "tcp", "--orig-dst", w.service.Addr().String(),
			"--orig-port-dst", strconv.Itoa(int(w.service.Port())))
		if lerr != nil {
			errs = append(errs, fmt.Errorf("list conntrack flows for %s: %w", w.service, lerr))
		}
		out, serr := w.proc.Stop()
		if serr != nil {
			errs = append(errs, serr)
		}
		streamed, bad, perr := ParseOutput(string(out))
		if perr != nil {
			errs = append(errs, fmt.Errorf("%d unreadable conntrack lines: %w", bad, perr))
		}
		listed, bad, perr := ParseOutput(string(list))
		if perr != nil {
			errs = append(errs, fmt.Errorf("%d unreadable conntrack lines: %w", bad, perr))
		}
		flows = append(streamed, listed...)
		w.log.Info("conntrack watch stopped", "service", w.service.String(), "events", len(streamed), "listed", len(listed))
	})
	return flows, errors.Join(errs...)
}
