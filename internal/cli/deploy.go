package cli

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
)

func init() { register(newDeployCmd) }

func newDeployCmd() *cobra.Command {
	opts := deploy.Options{Namespace: "probegate", Variant: "good", Replicas: 3}
	var clusterName string
	var env []string
	var load bool
	cmd := &cobra.Command{
		Use:   "deploy",
		Short: "Install PostgreSQL, toxiproxy and a target variant into a namespace and wait until ready",
		Long: `deploy installs the bundled fixture into the local kind cluster: PostgreSQL, toxiproxy in front
of it (the target's only path to the database), and the target variant you choose. It loads the images
built by 'make images', applies fixtures/manifests, and waits until every replica is ready and the
target's NodePort and toxiproxy's API answer on 127.0.0.1. Re-running it switches variants in place.

Variants: good, deep-liveness, always-ready, no-drain, no-startup-probe, shared-pool-probe,
identical-probes, shallow-liveness, keepalive-drain, short-grace, slow-recovery, queue-only, no-hysteresis,
wrapper (see fixtures/README.md for the verdict each one must fail; wrapper is a control that must pass).`,
		Example: `  probegate deploy --variant deep-liveness --namespace demo
  probegate deploy --slot 1 --env BOOTSTRAP_DURATION=30s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			overrides, err := parseEnv(env)
			if err != nil {
				return withCode(ExitError, err)
			}
			opts.Env = overrides
			opts.Log = slog.Default()
			if err := opts.Validate(); err != nil {
				return withCode(ExitError, err)
			}
			ctx := cmd.Context()
			c, err := cluster.Get(ctx, clusterName)
			if err != nil {
				return withCode(ExitError, err)
			}
			if load {
				if err := c.LoadImages(ctx, deploy.Images(opts)...); err != nil {
					return withCode(ExitError, err)
				}
			}
			client, err := c.Client()
			if err != nil {
				return withCode(ExitError, err)
			}
			ep, err := deploy.Install(ctx, client, opts)
			if err != nil {
				return withCode(ExitError, err)
			}
			fmt.Fprintf(os.Stdout, "fixture %q ready in namespace %s (%d replicas)\n", ep.Variant, ep.Namespace, opts.Replicas)
			fmt.Fprintf(os.Stdout, "  target     %s  (service %s, NodePort %d)\n", ep.TargetURL, ep.TargetService, ep.TargetNodePort)
			fmt.Fprintf(os.Stdout, "  toxiproxy  %s  (proxy %q, NodePort %d)\n", ep.ToxiproxyURL, ep.ToxiproxyProxy, ep.ToxiproxyNodePort)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Variant, "variant", opts.Variant, "target variant (a manifest in fixtures/manifests)")
	f.StringVarP(&opts.Namespace, "namespace", "n", opts.Namespace, "namespace to install into (created if missing)")
	f.IntVar(&opts.Slot, "slot", 0, fmt.Sprintf("port slot 0..%d: target on 127.0.0.1:%d+slot, toxiproxy API on 127.0.0.1:%d+slot",
		cluster.Slots-1, cluster.HostPort(cluster.TargetNodePort(0)), cluster.HostPort(cluster.ToxiproxyNodePort(0))))
	f.Int32Var(&opts.Replicas, "replicas", opts.Replicas, "target replicas")
	f.StringArrayVar(&env, "env", nil, "override a target env var, KEY=VALUE (repeatable), e.g. BOOTSTRAP_DURATION=30s")
	f.DurationVar(&opts.Timeout, "timeout", 0, "how long to wait for readiness (default 3m)")
	f.BoolVar(&load, "load-images", true, "load the images into the cluster first")
	f.StringVar(&clusterName, "cluster", cluster.DefaultName, "kind cluster name")
	f.StringVar(&opts.TargetImage, "target-image", "", "target image (default "+deploy.DefaultTargetImage+")")
	f.StringVar(&opts.PostgresImage, "postgres-image", "", "PostgreSQL image (default "+deploy.DefaultPostgresImage+")")
	f.StringVar(&opts.ToxiproxyImage, "toxiproxy-image", "", "toxiproxy image (default "+deploy.DefaultToxiproxyImage+")")
	return cmd
}

// parseEnv turns KEY=VALUE flags into a map.
func parseEnv(kvs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--env %q: want KEY=VALUE", kv)
		}
		out[k] = v
	}
	return out, nil
}
