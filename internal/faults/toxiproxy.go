package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/probegate/probegate/internal/pause"
	"github.com/probegate/probegate/internal/timeline"
)

// dependencyParam picks the dependency a DB fault acts on (see Env.proxy).
var dependencyParam = Param{Name: "dependency", Kind: KindString, Doc: "the target's dependency to act on (default its first; the fixture's database)"}

// dbTarget returns the toxiproxy client and the proxy a DB fault acts on.
func dbTarget(a Args) (*toxiproxy.Client, Proxy, error) {
	proxy, skip := a.Env.proxy(a.Spec.Params["dependency"])
	if skip != "" {
		return nil, Proxy{}, errors.New(skip) // NeedsToxiproxy skips the fault before this
	}
	api := a.Env.ToxiproxyURL
	if api == "" {
		var err error
		if api, err = a.Env.forwardToxiproxyAPI(); err != nil {
			return nil, Proxy{}, err
		}
	}
	client, err := NewToxiproxyClient(api)
	if err != nil {
		return nil, Proxy{}, err
	}
	return client, proxy, nil
}

// forwardToxiproxyAPI port-forwards to the toxiproxy pod's API port and returns its loopback URL.
// The forward lasts as long as the pod (a scenario's namespace) or the process.
func (env Env) forwardToxiproxyAPI() (string, error) {
	sel := env.ToxiproxySelector
	if sel == "" {
		sel = "app=toxiproxy"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pod, err := PodChoice{Client: env.Client, Namespace: env.Namespace, Selector: sel}.Choose(ctx)
	if err != nil {
		return "", fmt.Errorf("toxiproxy API: %w", err)
	}
	addr, _, err := PortForward(ctx, env.Config, env.Namespace, pod.Name, env.ToxiproxyAPIPort)
	if err != nil {
		return "", fmt.Errorf("toxiproxy API: %w", err)
	}
	return "http://" + addr, nil
}

// NewToxiproxyClient returns a client for the toxiproxy API at apiURL, which must be on a loopback
// address (the port kind publishes on 127.0.0.1).
func NewToxiproxyClient(apiURL string) (*toxiproxy.Client, error) {
	u, err := url.Parse(apiURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("toxiproxy API URL %q: want http://127.0.0.1:<port>", apiURL)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("toxiproxy API URL %q: host is not a loopback address", apiURL)
	}
	return toxiproxy.NewClient(u.Host), nil
}

// apiStatus returns the HTTP status of a toxiproxy API error, 0 for other errors.
func apiStatus(err error) int {
	var ae *toxiproxy.ApiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// toxic is a toxiproxy toxic on the DB proxy: db-latency and db-timeout are toxics that differ only
// in kind, attributes and how their effect shows.
type toxic struct {
	Recorder
	state
	client *toxiproxy.Client
	proxy  string
	name   string // the toxic's name on the proxy
	kind   string // toxiproxy toxic type: latency, timeout
	attrs  toxiproxy.Attributes
	params map[string]string
	probe  DBProbe
	// effect judges a probe measurement taken while the toxic is active; recovered one taken after.
	effect    func(d time.Duration, err error) (bool, string)
	recovered func(d time.Duration, err error) bool
}

func (t *toxic) Type() string { return t.Recorder.Type }

// Inject adds the toxic (toxicity 1: every connection, old and new) and records the measured effect.
func (t *toxic) Inject(ctx context.Context) error {
	if !t.begin(true) {
		t.end(true)
		return nil
	}
	p, err := t.client.Proxy(t.proxy)
	if err != nil {
		t.end(false)
		return fmt.Errorf("%s: find toxiproxy proxy %q: %w", t.Recorder.Type, t.proxy, err)
	}
	if _, err := p.AddToxic(t.name, t.kind, "downstream", 1.0, t.attrs); err != nil && apiStatus(err) != 409 {
		t.end(false)
		return fmt.Errorf("%s: add %s toxic to proxy %q: %w", t.Recorder.Type, t.kind, t.proxy, err)
	}
	t.record(timeline.FaultInject, t.proxy, "", fmt.Sprintf("%s toxic %q on proxy %q (downstream, toxicity 1.0)", t.kind, t.name, t.proxy), copyParams(t.params))
	t.end(true)
	t.observe(ctx, true)
	return nil
}

// Revert removes the toxic and records the measured recovery.
func (t *toxic) Revert(ctx context.Context) error {
	if !t.begin(false) {
		t.end(false)
		return nil
	}
	// Removing a toxic can block inside toxiproxy while a link is stuck (its API then answers 503
	// after 25 s; upstream issue Shopify/toxiproxy#558): try again before giving up.
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var p *toxiproxy.Proxy
		if p, err = t.client.Proxy(t.proxy); err == nil {
			err = p.RemoveToxic(t.name)
			if apiStatus(err) == 404 {
				err = nil // already gone
			}
		}
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		t.end(true)
		return fmt.Errorf("%s: remove toxic %q from proxy %q: %w", t.Recorder.Type, t.name, t.proxy, err)
	}
	t.record(timeline.FaultRevert, t.proxy, "", fmt.Sprintf("removed %s toxic %q", t.kind, t.name), copyParams(t.params))
	t.end(false)
	t.observe(ctx, false)
	return nil
}

func (t *toxic) observe(ctx context.Context, active bool) {
	if t.probe == nil {
		noProbe(t.Recorder, t.proxy, active)
		return
	}
	if !active {
		observeRecovery(ctx, t.Recorder, t.proxy, t.probe, t.recovered)
		return
	}
	d, err := t.probe.Measure(ctx)
	ok, what := t.effect(d, err)
	if !ok && err != nil && ctx.Err() == nil {
		// The measurement itself failed (the port-forward to the proxy stalled on a busy node, say)
		// rather than showing the toxic had no effect: measure once more before calling it unproven.
		first := err
		d, err = t.probe.Measure(ctx)
		ok, what = t.effect(d, err)
		what = fmt.Sprintf("%s, second attempt (the first failed: %v)", what, first)
	}
	recordProbe(ctx, t.Recorder, t.proxy, t.probe, d, err, ok, what, true)
}

// measureRan measures once, and once more when the first measurement never reached the proxy
// (ProbeNotRunError: a port-forward that failed on a busy node) while ctx lives; note then says so.
func measureRan(ctx context.Context, probe DBProbe) (d time.Duration, note string, err error) {
	d, err = probe.Measure(ctx)
	if !probeNotRun(err) || ctx.Err() != nil {
		return d, "", err
	}
	first := err
	d, err = probe.Measure(ctx)
	return d, fmt.Sprintf(", second attempt (the first failed: %v)", first), err
}

// recoveryAttempts and recoveryPause bound how long a DB fault's revert waits to see the database
// healthy again through the proxy.
var (
	recoveryAttempts = 5
	recoveryPause    = time.Second
)

// observeRecovery measures until healthy says the database is back (or the attempts run out) and
// records the last measurement.
func observeRecovery(ctx context.Context, rec Recorder, target string, probe DBProbe, healthy func(time.Duration, error) bool) {
	var d time.Duration
	var err error
	attempt := 0
	for attempt < recoveryAttempts {
		attempt++
		d, err = probe.Measure(ctx)
		if healthy(d, err) || attempt == recoveryAttempts || pause.For(ctx, recoveryPause) != nil {
			break
		}
	}
	ok := healthy(d, err)
	what := fmt.Sprintf("recovered, attempt %d", attempt)
	switch {
	case !ok && probeNotRun(err):
		what = fmt.Sprintf("recovery unproven: the last of %d attempts never reached the proxy", attempt)
	case !ok:
		what = fmt.Sprintf("not recovered after %d attempts", attempt)
	}
	recordProbe(ctx, rec, target, probe, d, err, ok, what, false)
}

// recordProbe records one DB probe measurement as an observe action. While the fault is active, a
// probe that can tell (TargetPath) adds whether the target's own pods connect through the proxy.
// The measurement proves the proxy's path; when the proxy has accepted no connection from any of
// the target's pods, that path is not the target's (it reaches its database by a pod IP or another
// Service, or has not connected at all), so the fault is not shown to act on the target: ok is
// false, saying so. A path that could not be read (Exposure.Err) is noted and leaves ok as measured.
func recordProbe(ctx context.Context, r Recorder, target string, probe DBProbe, d time.Duration, err error, ok bool, what string, active bool) {
	params := map[string]string{"latency_ms": strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64)}
	detail := fmt.Sprintf("%s: %s", probe, d.Round(time.Millisecond))
	if err != nil {
		params["error"] = err.Error()
		detail = fmt.Sprintf("%s: %v after %s", probe, err, d.Round(time.Millisecond))
	}
	detail += " (" + what + ")"
	if tp, isTP := probe.(TargetPath); isTP && active {
		ctx, cancel := context.WithTimeout(ctx, targetPathTimeout)
		e := tp.TargetPath(ctx)
		cancel()
		for k, v := range e.Params() {
			params[k] = v
		}
		detail += "; " + e.Note()
		if ok && e.Bypassed() {
			ok = false
			detail += fmt.Sprintf(": the fault acts on the proxy, but no pod of the target has connected through it, so it is not shown to reach the target (does the app reach %s through the Service the target file declares?)", target)
		}
	}
	r.proof(target, "", phase(active), ok, detail, params)
}

// targetPathTimeout bounds reading whether the target's pods connect through the proxy.
const targetPathTimeout = 10 * time.Second

// noProbe records that a DB fault's effect could not be measured: there is no probe to the database
// through the proxy (no REST config to port-forward with).
func noProbe(r Recorder, target string, active bool) {
	r.proof(target, "", phase(active), false, "no database probe through the proxy (no REST config to port-forward with): effect not measured", nil)
}

func copyParams(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}
