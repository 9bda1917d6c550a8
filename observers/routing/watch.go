package routing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"
)

// Exec runs a command in the node container and returns its stdout (cluster.Cluster.NodeExec).
type Exec func(ctx context.Context, args ...string) ([]byte, error)

// DefaultInterval is the time between two reads of the nat table. One read costs about 20 ms of
// CPU in a kind node; at 2 per second, four scenarios side by side use under a fifth of a core.
const DefaultInterval = 500 * time.Millisecond

// maxWatch bounds the node-side loop should Stop never come: a process started by `docker exec`
// outlives the docker client.
const maxWatch = 2 * time.Hour

// stopTimeout bounds the commands Stop runs in the node.
const stopTimeout = 20 * time.Second

// dnsName is what a namespace or Service name may contain; anything else would be pasted into a
// shell command.
var dnsName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Watcher polls the node's nat table for one Service's backends.
type Watcher struct {
	exec    Exec
	service string
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

// Start begins polling, every interval (DefaultInterval when 0), the backends kube-proxy routes
// new connections of namespace/service to. It returns once the node-side loop runs.
func Start(ctx context.Context, exec Exec, namespace, service string, interval time.Duration, log *slog.Logger) (*Watcher, error) {
	if exec == nil {
		return nil, errors.New("routing: no way to run commands in the node")
	}
	if !dnsName.MatchString(namespace) || !dnsName.MatchString(service) {
		return nil, fmt.Errorf("routing: %q/%q is not a namespace/Service name", namespace, service)
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	watchers.Lock()
	watchers.n++
	n := watchers.n
	watchers.Unlock()
	w := &Watcher{exec: exec, service: namespace + "/" + service, log: log, done: make(chan struct{}),
		pidFile: fmt.Sprintf("/run/probegate-routing-%s-%d-%d.pid", namespace, n, time.Now().UnixNano())}
	// The stamp is taken after each read: the set printed above it held no later than the stamp.
	script := fmt.Sprintf(`echo $$ > %s; end=$(( $(date +%%s) + %d )); `+
		`while [ "$(date +%%s)" -lt "$end" ]; do `+
		`iptables-save -t nat | grep -F -e '--comment "%s' | grep -F -e ' -> '; `+
		`echo "%s$(date +%%s.%%N)"; sleep %.3f; done`,
		w.pidFile, int(maxWatch.Seconds()), w.service, stampPrefix, interval.Seconds())
	go func() {
		defer close(w.done)
		// The loop ends by Stop's kill, not by ctx: a cancelled docker exec would leave it running.
		w.out, w.err = exec(context.WithoutCancel(ctx), "sh", "-c", script)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := exec(ctx, "test", "-s", w.pidFile); err == nil {
			break
		}
		select {
		case <-w.done:
			return nil, fmt.Errorf("routing watch in the node for %s ended at once: %w", w.service, w.err)
		case <-ctx.Done():
			w.kill()
			return nil, fmt.Errorf("start routing watch for %s: %w", w.service, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			w.kill()
			return nil, fmt.Errorf("start routing watch for %s: no pid file %s after 10s", w.service, w.pidFile)
		}
	}
	log.Info("routing watch started", "service", w.service, "interval", interval)
	return w, nil
}

func (w *Watcher) kill() {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	cmd := fmt.Sprintf("test -s %[1]s && kill $(cat %[1]s); rm -f %[1]s", w.pidFile)
	if _, err := w.exec(ctx, "sh", "-c", cmd); err != nil {
		w.log.Warn("stop routing watch", "service", w.service, "err", err)
	}
}

// Stop ends the loop and returns its snapshots. It is safe to call more than once; later calls
// return nil.
func (w *Watcher) Stop() ([]Snapshot, error) {
	var snaps []Snapshot
	var errs []error
	w.once.Do(func() {
		w.kill()
		select {
		case <-w.done:
		case <-time.After(stopTimeout):
			errs = append(errs, fmt.Errorf("routing watch for %s did not end", w.service))
			return
		}
		var bad int
		var err error
		snaps, bad, err = Parse(string(w.out), w.service)
		if err != nil {
			errs = append(errs, err)
		}
		if bad > 0 {
			errs = append(errs, fmt.Errorf("%d unreadable routing rule lines for %s", bad, w.service))
		}
		w.log.Info("routing watch stopped", "service", w.service, "snapshots", len(snaps))
	})
	return snaps, errors.Join(errs...)
}
