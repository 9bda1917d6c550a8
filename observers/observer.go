// Package observers watches one namespace of a cluster and writes what Kubernetes did onto a
// timeline: EndpointSlice endpoint transitions of the target Service, pod lifecycle changes,
// container restarts with their cause, probe failures and other events, and Deployment rollout
// progress.
//
// Usage:
//
//	obs, err := observers.New(client, tl, observers.Options{Namespace: ns, Service: "target"})
//	obs.Start(ctx)
//	if err := obs.WaitForSync(ctx); err != nil { ... } // initial state is on the timeline
//	... run the scenario ...
//	obs.Stop()                                          // flushes pending endpoint removals
//	final := observers.AttributeRestarts(tl.Entries())  // restart causes with late events folded in
//
// Times: each object is stamped with the local receive time the moment the reflector hands it to
// the informer's queue (a transform func), before any handler runs; entries carry that time (T, At)
// and the API's own one-second timestamp beside it (APITime) when the object has one.
//
// Gaps: when a watch ends (timeout, broken connection, apiserver restart) the observer does not
// resume it from the last resource version; it forces a fresh list instead, so the informer
// compares the listed state against what it knew. Every entry produced by that relist is marked
// Recovered (the change happened somewhere in the gap), and a Mark named "watch-gap" records when
// the watch ended. States a pod passed through entirely inside a gap cannot be recovered.
package observers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/probegate/probegate/internal/timeline"
)

// Options scope an Observer to one namespace and its target.
type Options struct {
	// Namespace to watch (required).
	Namespace string
	// Service whose EndpointSlices (label kubernetes.io/service-name) are tracked; empty: none.
	Service string
	// Deployment whose rollout progress is tracked; empty: every Deployment in the namespace.
	Deployment string
	// PodSelector is a label selector limiting the pods watched; empty: every pod in the namespace.
	PodSelector string
	// MoveWindow is how long an endpoint that left a slice may take to show up in another slice of
	// the same Service before it is reported removed (default 500ms; negative: report at once).
	MoveWindow time.Duration
	// Logger receives watch gaps and handler errors (default slog.Default()).
	Logger *slog.Logger
}

// Observer runs the informers of one namespace and writes their changes onto a timeline.
type Observer struct {
	tl   *timeline.Timeline
	opts Options
	log  *slog.Logger

	informers []*watched
	endpoints *endpointObserver
	pods      *podObserver
	// ids names pods on the timeline by UID (a StatefulSet's replacement is another pod).
	ids incarnations

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    sync.WaitGroup
	started bool
}

// watched is one informer with its gap-detecting list-watch and handler registration.
type watched struct {
	name     string
	lw       *gapListWatch
	informer cache.SharedIndexInformer
	reg      cache.ResourceEventHandlerRegistration
}

// New builds an Observer; nothing is watched until Start.
func New(client kubernetes.Interface, tl *timeline.Timeline, opts Options) (*Observer, error) {
	if client == nil || tl == nil {
		return nil, errors.New("observers: client and timeline are required")
	}
	if opts.Namespace == "" {
		return nil, errors.New("observers: namespace is required")
	}
	if opts.MoveWindow == 0 {
		opts.MoveWindow = 500 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	o := &Observer{tl: tl, opts: opts, log: opts.Logger.With("namespace", opts.Namespace)}
	o.pods = &podObserver{o: o, ended: map[string]map[string]bool{}}
	add := func(w *watched, h cache.ResourceEventHandler) error {
		if err := w.informer.SetTransform(w.lw.stamp); err != nil {
			return fmt.Errorf("observers: set %s transform: %w", w.name, err)
		}
		if err := w.informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			if !errors.Is(err, errWatchGap) {
				o.log.Warn("watch failed", "resource", w.name, "err", err)
			}
		}); err != nil {
			return fmt.Errorf("observers: set %s watch error handler: %w", w.name, err)
		}
		reg, err := w.informer.AddEventHandler(h)
		if err != nil {
			return fmt.Errorf("observers: add %s handler: %w", w.name, err)
		}
		w.reg = reg
		o.informers = append(o.informers, w)
		return nil
	}
	if err := add(podInformer(o, client), o.pods.handler()); err != nil {
		return nil, err
	}
	if opts.Service != "" {
		o.endpoints = newEndpointObserver(o)
		if err := add(endpointSliceInformer(o, client), o.endpoints.handler()); err != nil {
			return nil, err
		}
	}
	if err := add(eventInformer(o, client), eventHandler(o)); err != nil {
		return nil, err
	}
	if err := add(deploymentInformer(o, client), rolloutHandler(o)); err != nil {
		return nil, err
	}
	return o, nil
}

// Start runs the informers in the background until ctx ends or Stop is called.
func (o *Observer) Start(ctx context.Context) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.started {
		return
	}
	o.started = true
	ctx, o.cancel = context.WithCancel(ctx)
	for _, w := range o.informers {
		o.done.Add(1)
		go func() {
			defer o.done.Done()
			w.informer.RunWithContext(ctx)
		}()
	}
}

// WaitForSync blocks until every informer has listed and its handler has processed the initial
// list, so the initial state is on the timeline.
func (o *Observer) WaitForSync(ctx context.Context) error {
	var synced []cache.InformerSynced
	for _, w := range o.informers {
		synced = append(synced, w.reg.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("observers: wait for informers in namespace %q to sync: %w", o.opts.Namespace, context.Cause(ctx))
	}
	return nil
}

// Stop stops the informers, waits for them to end and writes any endpoint removal still held back
// by MoveWindow. It is safe to call more than once.
func (o *Observer) Stop() {
	o.mu.Lock()
	cancel := o.cancel
	o.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	o.done.Wait()
	if o.endpoints != nil {
		o.endpoints.flush()
	}
}

// Run starts the observer, waits for the initial sync, blocks until ctx ends and stops.
func (o *Observer) Run(ctx context.Context) error {
	o.Start(ctx)
	defer o.Stop()
	if err := o.WaitForSync(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// Relists returns how many times each watched resource was relisted after a watch gap.
func (o *Observer) Relists() map[string]int {
	out := map[string]int{}
	for _, w := range o.informers {
		out[w.name] = w.lw.relistCount()
	}
	return out
}

// append writes e onto the timeline with the receive stamp s.
func (o *Observer) append(s stamp, e timeline.Entry) timeline.Entry {
	e.At, e.T = s.at, s.t
	e.Recovered = e.Recovered || s.recovered
	return o.tl.Append(e)
}
