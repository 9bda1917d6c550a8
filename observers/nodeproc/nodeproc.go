// Package nodeproc runs one long-lived shell script in the kind node for an observer (conntrack's
// event stream, the routing watch) and ends it by its pid: a `docker exec` whose client is
// cancelled leaves its process running in the node, so the script records its pid in a file first
// and Stop kills that.
package nodeproc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Exec runs a command in the node container and returns its stdout (cluster.Cluster.NodeExec).
type Exec func(ctx context.Context, args ...string) ([]byte, error)

// MaxRun bounds a script's life in the node should Stop never come (the harness killed): scripts
// run under `timeout` or check it themselves.
const MaxRun = 2 * time.Hour

// stopTimeout bounds the commands Stop runs in the node and its wait for the script's end.
const stopTimeout = 20 * time.Second

// startTimeout bounds the wait for the script's pid file.
const startTimeout = 10 * time.Second

var started atomic.Int64

// Proc is one script running in the node.
type Proc struct {
	exec    Exec
	what    string
	pidFile string

	done chan struct{}
	out  []byte
	err  error
	once sync.Once
}

// PidFile returns a fresh pid file path for a script named by name (letters, digits and dashes).
func PidFile(name string) string {
	return fmt.Sprintf("/run/probegate-%s-%d-%d.pid", name, started.Add(1), time.Now().UnixNano())
}

// Start runs script (which must first write its pid, `echo $$ > PIDFILE`, and may exec into the
// long-lived command) in the node, and returns once the pid file exists. what names it in errors.
func Start(ctx context.Context, exec Exec, what, pidFile, script string) (*Proc, error) {
	if exec == nil {
		return nil, fmt.Errorf("%s: no way to run commands in the node", what)
	}
	p := &Proc{exec: exec, what: what, pidFile: pidFile, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		// The script ends by Stop's kill, not by ctx: a cancelled docker exec would leave it running.
		p.out, p.err = exec(context.WithoutCancel(ctx), "sh", "-c", script)
	}()
	deadline := time.Now().Add(startTimeout)
	for {
		if _, err := exec(ctx, "test", "-s", pidFile); err == nil {
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s in the node ended at once: %w", what, p.err)
		case <-ctx.Done():
			p.kill()
			return nil, fmt.Errorf("start %s: %w", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.kill()
			return nil, fmt.Errorf("start %s: no pid file %s after %s", what, pidFile, startTimeout)
		}
	}
}

// kill ends the script by its pid and removes the pid file.
func (p *Proc) kill() error {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	cmd := fmt.Sprintf("test -s %[1]s && kill $(cat %[1]s); rm -f %[1]s", p.pidFile)
	if _, err := p.exec(ctx, "sh", "-c", cmd); err != nil {
		return fmt.Errorf("stop %s: %w", p.what, err)
	}
	return nil
}

// Stop kills the script and returns what it wrote to stdout. It is safe to call more than once;
// later calls return nil and no error.
func (p *Proc) Stop() ([]byte, error) {
	var out []byte
	var errs []error
	p.once.Do(func() {
		if err := p.kill(); err != nil {
			errs = append(errs, err)
		}
		select {
		case <-p.done:
			out = p.out
		case <-time.After(stopTimeout):
			errs = append(errs, fmt.Errorf("%s did not end", p.what))
		}
	})
	return out, errors.Join(errs...)
}
