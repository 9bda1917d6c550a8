package deploy

import (
	"context"
	"fmt"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/fixtures/manifests"
)

// Install applies PostgreSQL, toxiproxy and the target variant into opts.Namespace (created if
// missing) and waits until each is ready: dependencies first, then the target's rollout, its
// EndpointSlices, and, where kind publishes them, the target's NodePort and the toxiproxy API on
// 127.0.0.1. The images must already be in the cluster (see Images and cluster.LoadImages).
// Re-running it updates the objects in place, so it also switches variants.
func Install(ctx context.Context, client kubernetes.Interface, opts Options) (Endpoints, error) {
	if err := opts.defaults(); err != nil {
		return Endpoints{}, fmt.Errorf("deploy: %w", err)
	}
	ep := endpointsFor(opts)
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	start := time.Now()
	log := opts.Log.With("namespace", opts.Namespace, "variant", opts.Variant)

	if err := ensureNamespace(ctx, client, opts.Namespace); err != nil {
		return ep, fmt.Errorf("deploy fixture %q: %w", opts.Variant, err)
	}
	for _, name := range []string{manifests.Postgres, manifests.Toxiproxy} {
		if err := applyManifest(ctx, client, name, opts); err != nil {
			return ep, err
		}
	}
	for _, name := range []string{PostgresName, ToxiproxyName} {
		if err := poll(ctx, "deployment "+opts.Namespace+"/"+name, deploymentReady(client, opts.Namespace, name, 1)); err != nil {
			return ep, fmt.Errorf("deploy fixture %q: %w", opts.Variant, err)
		}
	}
	log.Debug("dependencies ready", "took", time.Since(start).Round(time.Millisecond))

	if err := applyManifest(ctx, client, opts.Variant, opts); err != nil {
		return ep, err
	}
	steps := []step{
		{"deployment " + opts.Namespace + "/" + TargetName, deploymentReady(client, opts.Namespace, TargetName, opts.Replicas)},
		{"pods of deployment " + opts.Namespace + "/" + TargetName, podsSettled(client, opts.Namespace, TargetSelector, opts.Replicas)},
		{"endpoints of service " + opts.Namespace + "/" + TargetName, endpointsReady(client, opts.Namespace, TargetName, opts.Replicas)},
	}
	if ep.TargetURL != "" {
		steps = append(steps, step{"target NodePort " + ep.TargetURL, httpOK(ep.TargetURL + "/health/ready")})
	}
	if ep.ToxiproxyURL != "" {
		steps = append(steps, step{"toxiproxy API " + ep.ToxiproxyURL, proxyExists(ep.ToxiproxyURL, ToxiproxyProxy)})
	}
	for _, s := range steps {
		if err := poll(ctx, s.what, s.check); err != nil {
			return ep, fmt.Errorf("deploy fixture %q: %w", opts.Variant, err)
		}
	}
	log.Info("fixture ready", "replicas", opts.Replicas, "target", ep.TargetURL, "toxiproxy", ep.ToxiproxyURL,
		"took", time.Since(start).Round(time.Millisecond))
	return ep, nil
}

// step is one thing Install waits for.
type step struct {
	what  string
	check func(context.Context) (bool, string, error)
}

func applyManifest(ctx context.Context, client kubernetes.Interface, name string, opts Options) error {
	objs, err := objectsFor(name, opts)
	if err != nil {
		return fmt.Errorf("deploy fixture %q: %w", opts.Variant, err)
	}
	for _, obj := range objs {
		if err := apply(ctx, client, obj); err != nil {
			return fmt.Errorf("deploy fixture %q: manifest %s: %w", opts.Variant, name, err)
		}
	}
	return nil
}

// proxyExists reports whether the toxiproxy API at url has an enabled proxy named name.
func proxyExists(url, name string) func(context.Context) (bool, string, error) {
	c := toxiclient.NewClient(url)
	return func(context.Context) (bool, string, error) {
		p, err := c.Proxy(name)
		if err != nil {
			return false, fmt.Sprintf("proxy %q: %v", name, err), nil
		}
		return p.Enabled, fmt.Sprintf("proxy %q disabled", name), nil
	}
}
