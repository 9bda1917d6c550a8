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
)

// Exec runs a command in the node container and returns its stdout (cluster.Cluster.NodeExec).
type Exec func(ctx context.Context, args ...string) ([]byte, error)

// maxWatch bounds the node-side conntrack stream, should Stop never come (the harness killed):
// a process started by `docker exec` outlives the docker client.
const maxWatch = 2 * time.Hour

// stopTimeout bounds the commands Stop runs in the node.
const stopTimeout = 20 * time.Second

// Watcher streams conntrack's NEW events for connections to one NodePort of the node.
type Watcher struct {
	exec    Exec
	service netip.AddrPort
	pidFile string
	log     *slog.Logger

	done chan struct{}
	out  []byte
	err  error
	once sync.Once
}

var watchers struct {
	sync.Mutex
	n int
}

// Start begins streaming `conntrack -E` in the node for TCP connections to service (the node's IP
// and the target's NodePort). It returns once the stream is running.
func Start(ctx context.Context, exec Exec, service netip.AddrPort, log *slog.Logger) (*Watcher, error) {
	if exec == nil {
		return nil, errors.New("conntrack: no way to run commands in the node")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	watchers.Lock()
	watchers.n++
	n := watchers.n
	watchers.Unlock()
	w := &Watcher{
		exec: exec, service: service, log: log, done: make(chan struct{}),
		pidFile: fmt.Sprintf("/run/probegate-conntrack-%d-%d-%d.pid", service.Port(), n, time.Now().UnixNano()),
	}
	script := fmt.Sprintf("echo $$ > %s; exec timeout %d conntrack -E -e NEW -p tcp --orig-dst %s --orig-port-dst %d -o timestamp -b 8388608",
		w.pidFile, int(maxWatch.Seconds()), service.Addr(), service.Port())
	go func() {
		defer close(w.done)
		// The stream ends by Stop's kill, not by ctx: a cancelled docker exec would leave it running.
		w.out, w.err = exec(context.WithoutCancel(ctx), "sh", "-c", script)
	}()
	// Wait for the pid file: the stream is then about to subscribe (events before that are found by
	// Stop's table listing).
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := exec(ctx, "test", "-s", w.pidFile); err == nil {
			break
		}
		select {
		case <-w.done:
			return nil, fmt.Errorf("conntrack -E in the node for %s ended at once: %w", service, w.err)
		case <-ctx.Done():
			w.kill()
			return nil, fmt.Errorf("start conntrack -E for %s: %w", service, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			w.kill()
			return nil, fmt.Errorf("start conntrack -E for %s: no pid file %s after 10s", service, w.pidFile)
		}
	}
	log.Info("conntrack watch started", "service", service.String())
	return w, nil
}

// kill ends the node-side stream by its pid.
func (w *Watcher) kill() {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	cmd := fmt.Sprintf("test -s %[1]s && kill $(cat %[1]s); rm -f %[1]s", w.pidFile)
	if _, err := w.exec(ctx, "sh", "-c", cmd); err != nil {
		w.log.Warn("stop conntrack watch", "service", w.service.String(), "err", err)
	}
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
		w.kill()
		select {
		case <-w.done:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("conntrack watch for %s did not end", w.service))
		}
		streamed, bad, perr := ParseOutput(string(w.out))
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
