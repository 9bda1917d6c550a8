package runner

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/interrupt"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/version"
	"github.com/probegate/probegate/reports"
)

// Connect returns the cluster to run on: the kubeconfig's current context when kubeconfig is set,
// else the local kind cluster (created if it is not running). It checks the API server answers
// before anything is deployed.
func Connect(ctx context.Context, kubeconfig string, log *slog.Logger) (*Cluster, *cluster.Cluster, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
		}
		cfg.QPS, cfg.Burst = 50, 100
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("client for %s: %w", kubeconfig, err)
		}
		c := &Cluster{Name: cfg.Host, Config: cfg, Client: cs}
		if err := c.ping(ctx); err != nil {
			return nil, nil, err
		}
		return c, nil, nil
	}
	kc, err := cluster.Create(ctx, cluster.Options{Log: log})
	if err != nil {
		return nil, nil, fmt.Errorf("local kind cluster: %w", err)
	}
	c, err := FromKind(ctx, kc)
	if err != nil {
		return nil, nil, err
	}
	return c, kc, nil
}

// FromKind wraps a kind cluster.
func FromKind(ctx context.Context, kc *cluster.Cluster) (*Cluster, error) {
	cfg, err := kc.RESTConfig()
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for cluster %q: %w", kc.Name, err)
	}
	c := &Cluster{Name: kc.Name, Config: cfg, Client: cs}
	if err := c.ping(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// ping fails with one line when the API server does not answer.
func (c *Cluster) ping(ctx context.Context) error {
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

// Preflighter is implemented by deployers that can check, before anything is created, that
// everything they will deploy is available (images built and loaded, manifests valid).
type Preflighter interface {
	Preflight(ctx context.Context, c *Cluster, variants []string, custom *scenario.TargetSpec) error
}

// Execute runs scenarios and writes the report directory out (report.json, junit.xml,
// report.html and each scenario's timeline.jsonl and requests.jsonl; the timelines are streamed
// there while the scenarios run). It returns the report; its ExitCode says how the run went. An
// error means the report could not be written. When ctx ends early (Ctrl-C), what was recorded
// until then is written all the same and the report is marked Interrupted.
func (r *Runner) Execute(ctx context.Context, scs []*scenario.Scenario, out string, command []string) (*reports.Report, error) {
	rep := &reports.Report{
		ProbegateVersion:  version.String(),
		KubernetesVersion: r.Cluster.Version,
		Cluster:           r.Cluster.Name,
		Started:           time.Now(),
		Command:           command,
	}
	r.reportDir = out
	rep.Scenarios = r.RunAll(ctx, scs)
	rep.Finished = time.Now()
	if ctx.Err() != nil {
		rep.Interrupted = "cancelled"
		if s := interrupt.From(ctx); s != nil {
			rep.Interrupted = s.Name()
		}
	}
	for i := range rep.Scenarios {
		s := &rep.Scenarios[i]
		s.Replay = ReplayCommand(s, r.Opts.Custom, r.Opts.Images)
	}
	if err := reports.WriteAll(out, rep); err != nil {
		return rep, fmt.Errorf("write report to %s: %w", out, err)
	}
	return rep, nil
}

// ReplayCommand is the command line that reruns exactly this scenario run.
func ReplayCommand(s *reports.ScenarioReport, custom *scenario.TargetSpec, images map[string]string) string {
	parts := []string{"probegate", "run", "--scenario", s.Name, "--seed", strconv.FormatInt(s.Seed, 10)}
	if custom != nil {
		parts = append(parts, "--target", custom.File)
		keys := make([]string, 0, len(images))
		for k := range images {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			parts = append(parts, "--image", k+"="+images[k])
		}
	} else if s.Variant != "" {
		parts = append(parts, "--variant", s.Variant)
	}
	return strings.Join(parts, " ")
}
