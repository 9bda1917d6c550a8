package faults

import (
	"context"
	"fmt"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/probegate/probegate/internal/timeline"
)

// TypeDBDown takes the database away.
const TypeDBDown = "db-down"

func init() {
	Register(Definition{
		Type:   TypeDBDown,
		Doc:    "takes a dependency away: its toxiproxy proxy is disabled, closing every connection and refusing new ones",
		Params: []Param{dependencyParam},
		Needs:  []Capability{NeedsToxiproxy},
		Proof:  "a PostgreSQL round trip through the proxy gets no answer: refused, closed or no reply (a probe that never reached the proxy, e.g. its port-forward failed, proves nothing; a tcp dependency's is not measured)",
		Build: func(a Args) (Fault, error) {
			client, proxy, err := dbTarget(a)
			if err != nil {
				return nil, err
			}
			return NewDBDown(a.Rec, client, proxy.Name, a.Env.dbProbe(client, proxy, 3*time.Second)), nil
		},
	})
}

// DBDown takes the database away: the toxiproxy proxy is disabled, which closes every connection
// through it and refuses new ones. Proof of effect: probe's round trip reaches the proxy and gets no
// answer (a ProbeNotRunError leaves it unproven).
type DBDown struct {
	Recorder
	state
	client *toxiproxy.Client
	proxy  string
	probe  DBProbe
}

// NewDBDown returns the db-down fault on proxy.
func NewDBDown(rec Recorder, client *toxiproxy.Client, proxy string, probe DBProbe) *DBDown {
	rec.Type = TypeDBDown
	return &DBDown{Recorder: rec, client: client, proxy: proxy, probe: probe}
}

// Type implements Fault.
func (f *DBDown) Type() string { return TypeDBDown }

// Inject disables the proxy.
func (f *DBDown) Inject(ctx context.Context) error {
	if !f.begin(true) {
		f.end(true)
		return nil
	}
	if err := f.setEnabled(false); err != nil {
		f.end(false)
		return err
	}
	f.record(timeline.FaultInject, f.proxy, "", fmt.Sprintf("disabled toxiproxy proxy %q: connections closed, new ones refused", f.proxy), nil)
	f.end(true)
	f.observe(ctx, true)
	return nil
}

// Revert enables the proxy again.
func (f *DBDown) Revert(ctx context.Context) error {
	if !f.begin(false) {
		f.end(false)
		return nil
	}
	if err := f.setEnabled(true); err != nil {
		f.end(true)
		return err
	}
	f.record(timeline.FaultRevert, f.proxy, "", fmt.Sprintf("enabled toxiproxy proxy %q", f.proxy), nil)
	f.end(false)
	f.observe(ctx, false)
	return nil
}

func (f *DBDown) setEnabled(on bool) error {
	p, err := f.client.Proxy(f.proxy)
	if err != nil {
		return fmt.Errorf("db-down: find toxiproxy proxy %q: %w", f.proxy, err)
	}
	if on {
		err = p.Enable()
	} else {
		err = p.Disable()
	}
	if err != nil {
		return fmt.Errorf("db-down: set proxy %q enabled=%v: %w", f.proxy, on, err)
	}
	return nil
}

func (f *DBDown) observe(ctx context.Context, active bool) {
	if f.probe == nil {
		noProbe(f.Recorder, f.proxy, active)
		return
	}
	if !active {
		observeRecovery(ctx, f.Recorder, f.proxy, f.probe, func(_ time.Duration, err error) bool { return err == nil })
		return
	}
	d, note, err := measureRan(ctx, f.probe)
	ok, what := err != nil, "no answer"
	switch {
	case err == nil:
		what = "the database still answered"
	case probeNotRun(err):
		ok, what = false, "effect unproven: the round trip never reached the proxy"
	}
	recordProbe(ctx, f.Recorder, f.proxy, f.probe, d, err, ok, what+note, true)
}
