package runner

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/scenario"
)

// Request is what a user asked to run (probegate run's flags, or the suite's choice).
type Request struct {
	// Scenarios are names from the catalogue or paths of scenario files; none means all.
	Scenarios []string
	// Resolved, when set, are the scenarios to run (replay, a profile), instead of Scenarios.
	Resolved []*scenario.Scenario
	// Suite says the scenarios are a suite (a profile), not named one by one: as in the default
	// suite, one the cluster has too few nodes for is NOT APPLICABLE rather than INCONCLUSIVE.
	Suite bool
	// Variant overrides every scenario's target variant.
	Variant string
	// TargetFile describes the user's own app instead of the bundled fixture; Images swap image
	// references of its manifests (old → new image or image tarball), over the file's own.
	TargetFile string
	Images     map[string]string
	// Via, when set, is the front door the load takes instead of the target file's (run --via).
	Via        *scenario.FrontDoor
	Seed       *int64
	Kubeconfig string
	Parallel   int
	Keep       bool
	// LoadAgents > 0 drives the load from that many in-cluster agent pods (image AgentImage).
	LoadAgents int
	AgentImage string
	Logger     *slog.Logger
	Progress   Progress
}

// Plan resolves a request against the catalogue without touching any cluster: unknown scenarios,
// unknown variants, malformed scenario or target files and faults this harness cannot inject are
// all reported here, as one-line errors.
func Plan(req Request, cat *scenario.Catalogue, vocab scenario.Vocabulary) ([]*scenario.Scenario, *deploy.App, error) {
	scs := req.Resolved
	if scs == nil {
		var err error
		if scs, err = cat.Select(req.Scenarios, vocab); err != nil {
			return nil, nil, err
		}
	}
	if req.Variant != "" && vocab.Variants != nil && !slices.Contains(vocab.Variants, req.Variant) {
		return nil, nil, fmt.Errorf("unknown variant %q (known: %s)", req.Variant, strings.Join(vocab.Variants, ", "))
	}
	var app *deploy.App
	if req.TargetFile != "" {
		if req.Variant != "" {
			return nil, nil, fmt.Errorf("--variant selects a bundled fixture variant; it cannot be combined with --target")
		}
		spec, err := scenario.LoadTargetSpec(req.TargetFile)
		if err != nil {
			return nil, nil, err
		}
		if req.Via != nil {
			spec.FrontDoor = req.Via
		}
		if app, err = deploy.LoadApp(spec, req.Images); err != nil {
			return nil, nil, err
		}
		if _, ok := loadProtocols[spec.Protocol]; !ok {
			return nil, nil, fmt.Errorf("target %s: protocol %s: the load speaks %s", spec.Name, spec.Protocol, strings.Join(loadProtocolNames(), ", "))
		}
		if spec.Protocol != scenario.LoadHTTP && req.LoadAgents > 0 {
			return nil, nil, fmt.Errorf("--load in-cluster: target %s speaks %s, and the in-cluster load agents speak HTTP only: use --load host", spec.Name, spec.Protocol)
		}
	} else if len(req.Images) > 0 {
		return nil, nil, fmt.Errorf("--image swaps images of your own manifests: it needs --target")
	} else if req.Via != nil {
		return nil, nil, fmt.Errorf("--via puts a front door of your own manifests in the path: it needs --target")
	}
	if req.Parallel < 0 {
		return nil, nil, fmt.Errorf("--parallel %d: must be at least 1", req.Parallel)
	}
	return scs, app, nil
}

// Setup plans the request, connects to the cluster (creating the local kind cluster when no
// kubeconfig is given), checks the images are there, and returns a runner ready to run the planned
// scenarios. Nothing is deployed and no fault is touched before it returns without error.
func Setup(ctx context.Context, req Request, cat *scenario.Catalogue, vocab scenario.Vocabulary) (*Runner, []*scenario.Scenario, error) {
	scs, app, err := Plan(req, cat, vocab)
	if err != nil {
		return nil, nil, err
	}
	log := req.Logger
	if log == nil {
		log = slog.Default()
	}
	c, kc, err := cluster.Connect(ctx, req.Kubeconfig, log)
	if err != nil {
		return nil, nil, err
	}
	var custom *scenario.TargetSpec
	if app != nil {
		custom = app.Spec
	}
	parallel := req.Parallel
	if parallel == 0 {
		parallel = cluster.DefaultParallel(localNodes(kc))
	}
	r := New(c, kc, app, Options{
		Variant: req.Variant, Custom: custom, Images: req.Images, Seed: req.Seed, Keep: req.Keep,
		Parallel: parallel, Slots: cluster.Slots, Logger: log, Progress: req.Progress,
		LoadAgents: req.LoadAgents, AgentImage: req.AgentImage,
		DefaultSuite: req.Suite || len(req.Scenarios) == 0 && req.Resolved == nil,
	})
	if err := r.Preflight(ctx, variantsOf(scs, req.Variant)); err != nil {
		return nil, nil, err
	}
	return r, scs, nil
}

// ClusterShape reads, without creating or changing anything, the cluster a run would use: its
// schedulable nodes and how many kind nodes run on this machine. Both are 0 when unknown (no local
// cluster yet: the run will create one).
func ClusterShape(ctx context.Context, kubeconfig string) (schedulable, local int, err error) {
	var client kubernetes.Interface
	if kubeconfig != "" {
		cfg, err := cluster.LoadKubeconfig(kubeconfig, "")
		if err != nil {
			return 0, 0, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
		}
		if client, err = kubernetes.NewForConfig(cfg); err != nil {
			return 0, 0, fmt.Errorf("client for %s: %w", kubeconfig, err)
		}
	} else {
		kc, err := cluster.Get(ctx, "")
		if err != nil {
			return 0, 0, nil // none yet
		}
		local = len(kc.Nodes)
		if client, err = kc.Client(); err != nil {
			return 0, local, err
		}
	}
	n, err := cluster.SchedulableNodes(ctx, client)
	return n, local, err
}

// localNodes is how many kind nodes run on this machine (0 for an existing cluster).
func localNodes(kc *cluster.Cluster) int {
	if kc == nil {
		return 0
	}
	return len(kc.Nodes)
}

// variantsOf lists the variants the scenarios will deploy.
func variantsOf(scs []*scenario.Scenario, override string) []string {
	if override != "" {
		return []string{override}
	}
	var out []string
	for _, s := range scs {
		if !slices.Contains(out, s.Target.Variant) {
			out = append(out, s.Target.Variant)
		}
	}
	return out
}
