package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/frontdoor"
	"github.com/probegate/probegate/internal/timeline"
)

// doorRun is the load's way through a front door that keeps its own record of the requests (an
// ingress controller or a gateway, package frontdoor): the load goes to the controller's NodePort
// on the node's address with the route's Host and a load id, and after it the record names each
// request's pod. A nil *doorRun does nothing: kube-proxy's path, attributed by conntrack
// (attribution.go).
type doorRun struct {
	door    frontdoor.Opened
	rec     frontdoor.Recorder
	baseURL string // http://NODE-IP:NODEPORT
	nodeIP  string
	loads   int // load ids handed out: ns-1, ns-2, … (a calibration's load is not the scenario's)
	loadID  string
	log     *slog.Logger
}

// doorRouteTimeout bounds the wait for the controller to serve the route after it is ready (it
// reads the Ingress or HTTPRoute and the EndpointSlices after its start).
const doorRouteTimeout = time.Minute

// doorRecordWait bounds the wait, once the load ended, for the record to hold its last requests.
const doorRecordWait = 5 * time.Second

// openDoor starts reading the record of the target's front door and waits until the route answers
// through it; nil for a door that keeps no record.
func (r *Runner) openDoor(ctx context.Context, t *deploy.Target, path string, log *slog.Logger) (*doorRun, error) {
	def, ok := frontdoor.Lookup(t.Door.Kind)
	if !ok || def.Record == nil {
		return nil, nil
	}
	if r.Opts.LoadAgents > 0 {
		return nil, fmt.Errorf("front door %s: the load goes through it from this host only (leave out --load in-cluster)", t.Door.Kind)
	}
	if r.Conn == nil || r.Conn.Client == nil {
		return nil, fmt.Errorf("front door %s: no cluster client", t.Door.Kind)
	}
	ip, err := r.nodeAddress(ctx)
	if err != nil {
		return nil, fmt.Errorf("front door %s: the node address its NodePort is reached on: %w", t.Door.Kind, err)
	}
	d := &doorRun{door: t.Door, nodeIP: ip.String(), log: log,
		baseURL: "http://" + ip.String() + ":" + strconv.Itoa(int(t.Door.NodePort))}
	if err := waitRoute(ctx, d.baseURL+path, t.Door.Host, doorRouteTimeout); err != nil {
		return nil, fmt.Errorf("front door %s (%s): %w", t.Door.Kind, t.Door.Serves(), err)
	}
	if d.rec, err = def.Record(ctx, r.Conn.Client, t.Door); err != nil {
		return nil, fmt.Errorf("front door %s: read its record: %w", t.Door.Kind, err)
	}
	log.Info("load through the front door", "door", t.Door.Kind, "serves", t.Door.Serves(), "url", d.baseURL, "host", t.Door.Host)
	return d, nil
}

// waitRoute polls GET u with host until it answers below 400.
func waitRoute(ctx context.Context, u, host string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil}}
	last, answered := errors.New("no answer"), false
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		if host != "" {
			req.Host = host
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 400 {
				return nil
			}
			last, answered = fmt.Errorf("status %d", resp.StatusCode), true
		} else if ctx.Err() == nil || !answered {
			// A request cut by the wait's own deadline says less than the answer before it.
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("GET %s (Host %q) did not answer below 400 within %s: %w", u, host, timeout, last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// loadSpec points spec at the controller with the route's Host and a new load id.
func (d *doorRun) loadSpec(spec loadSpec) loadSpec {
	if d == nil {
		return spec
	}
	u, err := url.Parse(spec.URL)
	if err != nil {
		return spec
	}
	d.loads++
	d.loadID = d.door.Namespace + "-" + strconv.Itoa(d.loads)
	spec.URL = d.baseURL + u.RequestURI()
	spec.AllowHost = d.nodeIP
	spec.Header = http.Header{frontdoor.LoadIDHeader: {d.loadID}}
	if d.door.Host != "" {
		spec.Header.Set("Host", d.door.Host)
	}
	return spec
}

// apply names each request of the last load's pod from the door's record and returns the run's
// attribution with the door's summary. Without a record line for the load, attribution is left
// to the header (the coverage gate judges what that gives) and the problem is logged.
func (d *doorRun) apply(ctx context.Context, reqs []timeline.Request, entries []timeline.Entry, sum *timeline.Attribution) ([]timeline.Request, *timeline.Attribution) {
	if d == nil {
		return reqs, sum
	}
	out, door, err := d.rec.Attribute(ctx, d.loadID, reqs, entries, doorRecordWait)
	if err != nil {
		d.log.Warn("front door attribution", "door", d.door.Kind, "err", err)
	}
	all := timeline.AttributionOf(out)
	all.Door = &door
	d.log.Info("request attribution", "door", d.door.Kind, "coverage", all.Coverage, "byHeader", all.ByHeader, "byDoor", all.ByDoor,
		"doorCoverage", door.Coverage, "lines", door.Lines, "noUpstream", door.NoUpstream, "retried", door.Retried,
		"unknownAddresses", door.UnknownAddresses, "agreement", door.Agreement)
	return out, &all
}

// stop stops reading the record.
func (d *doorRun) stop() {
	if d != nil && d.rec != nil {
		d.rec.Stop()
	}
}
