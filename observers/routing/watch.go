package routing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/probegate/probegate/observers/nodeproc"
)

// Exec runs a command in the node container and returns its stdout (cluster.Cluster.NodeExec).
type Exec = nodeproc.Exec

// DefaultInterval is the time between two reads of the nat table. One read costs about 20 ms of
// CPU in a kind node; at 2 per second, four scenarios side by side use under a fifth of a core.
const DefaultInterval = 500 * time.Millisecond

// goneReads is how many reads without a single rule of the Service end the node-side loop.
const goneReads = 20

// dnsName is what a namespace or Service name may contain; anything else would be pasted into a
// shell command.
var dnsName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Watcher polls the node's nat table for one Service's backends.
type Watcher struct {
	service string
	proc    *nodeproc.Proc
	log     *slog.Logger
	once    sync.Once
}

// Start begins polling, every interval (DefaultInterval when 0), the backends kube-proxy routes
// new connections of namespace/service to. It returns once the node-side loop runs.
func Start(ctx context.Context, exec Exec, namespace, service string, interval time.Duration, log *slog.Logger) (*Watcher, error) {
	if !dnsName.MatchString(namespace) || !dnsName.MatchString(service) {
		return nil, fmt.Errorf("routing: %q/%q is not a namespace/Service name", namespace, service)
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{service: namespace + "/" + service, log: log}
	pid := nodeproc.PidFile("routing-" + namespace)
	// The stamp is taken after each read: the set printed above it held no later than the stamp.
	// The loop also ends by itself once the Service has had no rules at all for goneReads reads (its
	// namespace deleted by a harness that was killed before Stop).
	script := fmt.Sprintf(`echo $$ > %s; end=$(( $(date +%%s) + %d )); gone=0; `+
		`while [ "$(date +%%s)" -lt "$end" ]; do `+
		`r=$(iptables-save -t nat | grep -F -e '--comment "%s'); `+
		`if [ -z "$r" ]; then gone=$((gone+1)); [ "$gone" -ge %d ] && exit 0; else gone=0; fi; `+
		`printf '%%s\n' "$r" | grep -F -e ' -> '; `+
		`echo "%s$(date +%%s.%%N)"; sleep %.3f; done`,
		pid, int(nodeproc.MaxRun.Seconds()), w.service, goneReads, stampPrefix, interval.Seconds())
	proc, err := nodeproc.Start(ctx, exec, "routing watch for "+w.service, pid, script)
	if err != nil {
		return nil, err
	}
	w.proc = proc
	log.Info("routing watch started", "service", w.service, "interval", interval)
	return w, nil
}

// Stop ends the loop and returns its snapshots. It is safe to call more than once; later calls
// return nil.
func (w *Watcher) Stop() ([]Snapshot, error) {
	var snaps []Snapshot
	var errs []error
	w.once.Do(func() {
		out, err := w.proc.Stop()
		if err != nil {
			errs = append(errs, err)
		}
		var bad int
		snaps, bad, err = Parse(string(out), w.service)
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
