package runner

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/loadgen"
	"github.com/probegate/probegate/observers"
)

// informerObservers starts the observers package's informers for the target's namespace.
type informerObservers struct {
	Logger *slog.Logger
}

// Start implements ObserverStarter.
func (o informerObservers) Start(ctx context.Context, c *cluster.Conn, t *Target, tl *timeline.Timeline) (Observation, error) {
	obs, err := observers.New(c.Client, tl, observers.Options{
		Namespace: t.Namespace, Service: t.Service, Deployment: t.Deployment, PodSelector: t.Selector, Logger: o.Logger,
	})
	if err != nil {
		return nil, err
	}
	obs.Start(context.WithoutCancel(ctx))
	if err := obs.WaitForSync(ctx); err != nil {
		obs.Stop()
		return nil, err
	}
	return &informerObservation{obs: obs, tl: tl}, nil
}

type informerObservation struct {
	obs *observers.Observer
	tl  *timeline.Timeline
}

func (o *informerObservation) Stop() { o.obs.Stop() }

// ReadyEndpoints counts the endpoints whose latest state on the timeline is ready.
func (o *informerObservation) ReadyEndpoints() int {
	return readyEndpoints(o.tl.Filter(timeline.KindEndpoint))
}

// readyEndpoints counts the endpoints whose latest transition among entries left them in rotation.
func readyEndpoints(entries []timeline.Entry) int {
	h := timeline.Endpoints(entries)
	n := 0
	for _, p := range h.Pods {
		if steps := h.ByPod[p]; steps[len(steps)-1].InRotation() {
			n++
		}
	}
	return n
}

// vegetaLoad drives load with the loadgen package, keeping every request in memory.
type vegetaLoad struct {
	Logger *slog.Logger
}

// Start implements LoadStarter.
func (v vegetaLoad) Start(ctx context.Context, spec LoadSpec, tl *timeline.Timeline) (LoadRun, error) {
	run := &vegetaRun{}
	cfg := loadgen.Config{
		URL:                     spec.URL,
		Rate:                    float64(spec.Rate),
		Duration:                spec.Duration,
		Timeout:                 spec.Timeout,
		NewConnectionPerRequest: !spec.KeepAlive,
		PodHeader:               spec.PodHeader,
		IgnorePodHeader:         spec.IgnorePodHeader,
		AllowHost:               spec.AllowHost,
		Timeline:                tl,
		OnRequest: func(r timeline.Request) {
			run.mu.Lock()
			run.reqs = append(run.reqs, r)
			run.mu.Unlock()
		},
		Logger: v.Logger,
	}
	l, err := loadgen.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	run.load = l
	return run, nil
}

type vegetaRun struct {
	load *loadgen.Load
	mu   sync.Mutex
	reqs []timeline.Request
}

func (r *vegetaRun) SetRate(rate float64) float64 { return r.load.SetRate(rate) }
func (r *vegetaRun) Stop()                        { r.load.Stop() }

// Counts is the load's tally, which the overload fault reads as its proof of effect.
func (r *vegetaRun) Counts() loadgen.Counts { return r.load.Counts() }

func (r *vegetaRun) Wait() ([]timeline.Request, error) {
	rep, err := r.load.Wait()
	r.mu.Lock()
	reqs := r.reqs
	r.mu.Unlock()
	if err != nil {
		return reqs, fmt.Errorf("load on %s (sent %d, recorded %d): %w", rep.URL, rep.Sent, rep.Recorded, err)
	}
	return reqs, nil
}

// fixtureDeployer installs the bundled fixture (PostgreSQL, toxiproxy, a target variant) with the
// deploy package. Kind, when set, is used to load the images before the first install.
type fixtureDeployer struct {
	Kind   *cluster.Cluster
	Logger *slog.Logger
	// Timeout bounds each install (deploy's default when 0).
	Timeout time.Duration
}

// Preflight implements Preflighter: every image the variants need must be built, and on kind it is
// loaded into the node.
func (d fixtureDeployer) Preflight(ctx context.Context, c *cluster.Conn, variants []string, custom *scenario.TargetSpec) error {
	if custom != nil {
		return fmt.Errorf("target %s: custom targets are not deployable yet by the fixture deployer", custom.Name)
	}
	seen := map[string]bool{}
	var images []string
	for _, v := range variants {
		for _, img := range deploy.Images(deploy.Options{Namespace: "preflight", Variant: v}) {
			if !seen[img] {
				seen[img] = true
				images = append(images, img)
			}
		}
	}
	if d.Kind == nil {
		return nil // an existing cluster: its images are its own business
	}
	return d.Kind.LoadImages(ctx, images...)
}

// Install implements Deployer.
func (d fixtureDeployer) Install(ctx context.Context, c *cluster.Conn, req InstallRequest) (*Target, error) {
	if req.Custom != nil {
		return nil, fmt.Errorf("target %s: custom targets are not deployable yet by the fixture deployer", req.Custom.Name)
	}
	opts := deploy.Options{
		Namespace: req.Namespace, Variant: req.Variant, Slot: req.Slot, Replicas: int32(req.Replicas), Log: d.Logger,
		Timeout: d.Timeout,
	}
	if req.Bootstrap > 0 {
		opts.Env = map[string]string{"BOOTSTRAP_DURATION": req.Bootstrap.String()}
	}
	ep, err := deploy.Install(ctx, c.Client, opts)
	if err != nil {
		return nil, err
	}
	return &Target{
		Namespace: ep.Namespace, Deployment: ep.TargetDeployment, Service: ep.TargetService, Container: "target",
		Selector: ep.TargetSelector, URL: ep.TargetURL, ToxiproxyURL: ep.ToxiproxyURL, DBProxy: ep.ToxiproxyProxy,
		AdminPort: int(ep.AdminPort), Description: "fixture " + ep.Variant,
	}, nil
}
