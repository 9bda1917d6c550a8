package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/internal/interrupt"
	"github.com/probegate/probegate/internal/runner"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/loadgen/agent"
)

// runFlags are the flags every command that runs scenarios shares (run, replay, tune --verify):
// the target and its image swaps, the cluster, how many scenarios run side by side, whether
// namespaces are kept, and where the report goes. Each command adds its own beside them.
type runFlags struct {
	target     string
	images     []string
	via        string
	out        string
	kubeconfig string
	parallel   int
	keep       bool
	load       string
	loadAgents int
	agentImage string
}

// runFlagsUse says how a command uses the shared run flags, for their help.
type runFlagsUse struct {
	// prefix starts every help text ("with --verify: " when the flags only matter with another).
	prefix string
	// recorded: --target and --image repeat those of recorded runs (replay, tune --verify) rather
	// than choose them.
	recorded bool
	// outName names the default report directory, _out/<outName>-<time>.
	outName string
}

// register adds the shared run flags to cmd.
func (f *runFlags) register(cmd *cobra.Command, use runFlagsUse) {
	fs := cmd.Flags()
	target := "target file naming your own app's manifests, run instead of the bundled target (docs/target-file.md)"
	image := "OLD=NEW: run image NEW (a local image or a docker-save tarball) wherever your manifests name OLD; repeatable"
	if use.recorded {
		target = "the target file the recorded runs used (runs of your own app only)"
		image = "OLD=NEW image swaps the recorded runs used (see run --image)"
	}
	fs.StringVar(&f.target, "target", "", use.prefix+target)
	fs.StringArrayVar(&f.images, "image", nil, use.prefix+image)
	fs.StringVar(&f.via, "via", "", use.prefix+"the front door the load takes instead of the target file's: kube-proxy, ingress[=NAME] or gateway[=NAME] (your manifests' Ingress or HTTPRoute; the only one when not named)")
	fs.StringVar(&f.out, "out", "", use.prefix+"report directory (default _out/"+use.outName+"-<time>)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", use.prefix+"run on this existing cluster instead of the local kind cluster")
	fs.IntVar(&f.parallel, "parallel", 0, use.prefix+"scenarios run side by side in their own namespaces (default: one per CPU, 2 to 4)")
	fs.BoolVar(&f.keep, "keep", false, use.prefix+"keep each scenario's namespace after the run")
	fs.StringVar(&f.load, "load", "host", use.prefix+"where the load runs: host (this process, through the NodePort kind publishes on 127.0.0.1) or in-cluster (agent pods reaching the target's ClusterIP, driven through the API server)")
	fs.IntVar(&f.loadAgents, "load-agents", 0, use.prefix+"with --load in-cluster: how many agent pods split the rate (default 2)")
	fs.StringVar(&f.agentImage, "agent-image", "", use.prefix+"the image of the load agents (--load in-cluster) and of the node agent (--kubeconfig, for freeze) (default "+agent.DefaultImage+", built and loaded into kind; on another cluster, push it where the nodes can pull it)")
}

// request is the runner request the flags say: target, image swaps, cluster, parallelism, keep.
// The command adds which scenarios.
func (f *runFlags) request() (runner.Request, error) {
	images, err := parseImageSwaps(f.images)
	if err != nil {
		return runner.Request{}, err
	}
	agents, err := f.agents()
	if err != nil {
		return runner.Request{}, err
	}
	var via *scenario.FrontDoor
	if f.via != "" {
		if via, err = scenario.ParseVia(f.via); err != nil {
			return runner.Request{}, err
		}
	}
	return runner.Request{TargetFile: f.target, Images: images, Via: via, Kubeconfig: f.kubeconfig,
		Parallel: f.parallel, Keep: f.keep, LoadAgents: agents, AgentImage: f.agentImage, Logger: slog.Default()}, nil
}

// agents is how many in-cluster agents --load and --load-agents ask for (0: host load).
func (f *runFlags) agents() (int, error) {
	switch f.load {
	case "", "host":
		if f.loadAgents != 0 {
			return 0, fmt.Errorf("--load-agents needs --load in-cluster")
		}
		if f.agentImage != "" && f.kubeconfig == "" {
			return 0, fmt.Errorf("--agent-image needs --load in-cluster or --kubeconfig (the node agent's image)")
		}
		return 0, nil
	case "in-cluster":
		switch {
		case f.loadAgents < 0:
			return 0, fmt.Errorf("--load-agents must be at least 1, got %d", f.loadAgents)
		case f.loadAgents == 0:
			return 2, nil
		}
		return f.loadAgents, nil
	}
	return 0, fmt.Errorf("--load %q: want host or in-cluster", f.load)
}

// outDir is --out, or _out/<name>-<time>.
func (f *runFlags) outDir(name string) string {
	if f.out != "" {
		return f.out
	}
	return "_out/" + name + "-" + timestamp()
}

// parseImageSwaps reads --image OLD=NEW flags.
func parseImageSwaps(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, f := range flags {
		from, to, ok := strings.Cut(f, "=")
		if !ok || from == "" || to == "" {
			return nil, fmt.Errorf("--image %q: want OLD=NEW (an image reference your manifests name, and the local image or tarball to run instead)", f)
		}
		if prev, dup := out[from]; dup && prev != to {
			return nil, fmt.Errorf("--image %s: given twice (%s and %s)", from, prev, to)
		}
		out[from] = to
	}
	return out, nil
}

// setupRunner connects the runner for req, with a progress line on a terminal stderr (closed by
// the caller; Close on nil does nothing). Its error carries the exit code: an interrupt during
// setup is reported as such (setup deploys and injects nothing, so there is nothing to undo).
func setupRunner(ctx context.Context, req runner.Request, cat *scenario.Catalogue, vocab scenario.Vocabulary, tty bool) (*runner.Runner, []*scenario.Scenario, *progressLine, error) {
	var progress *progressLine
	if tty {
		progress = newProgressLine(os.Stderr, time.Second)
		req.Progress = progress
	}
	r, scs, err := runner.Setup(ctx, req, cat, vocab)
	if err != nil {
		progress.Close()
		if sig := interrupt.From(ctx); sig != nil {
			return nil, nil, nil, withCode(sig.ExitCode(), fmt.Errorf("%s during setup, before any scenario started (%v)", sig, err))
		}
		return nil, nil, nil, withCode(ExitError, err)
	}
	return r, scs, progress, nil
}
