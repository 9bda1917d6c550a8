package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Conn is a connection to a cluster's API server, the one a run talks to: the local kind cluster
// or the current context of a --kubeconfig.
type Conn struct {
	// Name names the cluster in reports and errors: the kind cluster's name, else the API server.
	Name   string
	Config *rest.Config
	Client kubernetes.Interface
	// Version is the server's version ("v1.34.4").
	Version string
}

// LoadKubeconfig returns the client configuration of context (the current one when empty) in the
// kubeconfig file at path, or, when path is empty, in the default places ($KUBECONFIG,
// ~/.kube/config). The client may send 50 requests a second, in bursts of 100.
func LoadKubeconfig(path, context string) (*rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	if path == "" {
		rules = clientcmd.NewDefaultClientConfigLoadingRules()
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// Connect returns the cluster to run on: the kubeconfig's current context when kubeconfig is set,
// else the local kind cluster (created if it is not running), which it also returns. It checks the
// API server answers before anything is deployed.
func Connect(ctx context.Context, kubeconfig string, log *slog.Logger) (*Conn, *Cluster, error) {
	if kubeconfig != "" {
		cfg, err := LoadKubeconfig(kubeconfig, "")
		if err != nil {
			return nil, nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
		}
		c, err := connect(ctx, cfg.Host, cfg)
		if err != nil {
			return nil, nil, err
		}
		return c, nil, nil
	}
	// A run takes the local cluster as it is (one node, or the workers `cluster create --workers N`
	// made), unless PROBEGATE_WORKERS asks for a shape.
	kc, err := Create(ctx, Options{Log: log, AnyShape: os.Getenv("PROBEGATE_WORKERS") == ""})
	if err != nil {
		return nil, nil, fmt.Errorf("local kind cluster: %w", err)
	}
	c, err := kc.Connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	return c, kc, nil
}

// Connect returns a connection to the kind cluster's API server, once it answers.
func (c *Cluster) Connect(ctx context.Context) (*Conn, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return connect(ctx, c.Name, cfg)
}

func connect(ctx context.Context, name string, cfg *rest.Config) (*Conn, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for cluster %q: %w", name, err)
	}
	c := &Conn{Name: name, Config: cfg, Client: cs}
	if err := c.ping(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// ping fails with one line when the API server does not answer within 15 s, and records its
// version.
func (c *Conn) ping(ctx context.Context) error {
	type result struct {
		v   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := c.Client.Discovery().ServerVersion()
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{v: v.GitVersion}
	}()
	select {
	case <-ctx.Done():
		return fmt.Errorf("cluster %s: %w", c.Name, ctx.Err())
	case <-time.After(15 * time.Second):
		return fmt.Errorf("cluster %s is unreachable: no answer from the API server in 15s", c.Name)
	case r := <-done:
		if r.err != nil {
			return fmt.Errorf("cluster %s is unreachable: %w", c.Name, r.err)
		}
		c.Version = r.v
		return nil
	}
}
