package runner

import (
	"context"
	"log/slog"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/observers"
)

// informerObservers starts the observers package's informers for the target's namespace.
type informerObservers struct {
	Logger *slog.Logger
}

// Start implements observerStarter.
func (o informerObservers) Start(ctx context.Context, c *cluster.Conn, t *deploy.Target, tl *timeline.Timeline) (observation, error) {
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
