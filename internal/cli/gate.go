package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/profile"
	"github.com/probegate/probegate/internal/runner"
	"github.com/probegate/probegate/internal/scenario"
)

// gateFlags are run's --profile and --budget: which scenarios (a profile) and how long they may take.
type gateFlags struct {
	profile string
	budget  time.Duration
}

func (g *gateFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&g.profile, "profile", "", "a gate profile: built-in "+fmt.Sprint(profile.Names())+" or a profile file (.yaml: name, scenarios as names or labels, budget); docs/ci.md")
	fs.DurationVar(&g.budget, "budget", 0, "the most the chosen scenarios may take (default: the profile's); the run refuses to start, exit 2, when their estimate is over it")
}

// gate is a run's profile and budget, resolved.
type gate struct {
	name   string // the profile's name, "" without one
	budget time.Duration
}

// resolve applies the flags to req: a profile chooses its scenarios (a suite); --budget overrides
// its budget. The scenario flags were already put in req.
func (g *gateFlags) resolve(cmd *cobra.Command, req *runner.Request, cat *scenario.Catalogue) (gate, error) {
	out := gate{budget: g.budget}
	if cmd.Flags().Changed("budget") && g.budget <= 0 {
		return out, fmt.Errorf("--budget %s: must be positive", g.budget)
	}
	if g.profile == "" {
		return out, nil
	}
	if len(req.Scenarios) > 0 {
		return out, fmt.Errorf("--profile chooses the scenarios: it cannot be combined with --scenario")
	}
	p, err := profile.Load(g.profile)
	if err != nil {
		return out, err
	}
	scs, err := p.Select(cat)
	if err != nil {
		return out, err
	}
	req.Resolved, req.Suite = scs, true
	out.name = p.Name
	if out.budget == 0 {
		out.budget = p.Budget
	}
	return out, nil
}

// check estimates the planned scenarios on the cluster the run will use (read, never created) and
// says what the run takes on w; over the budget it is an error saying what to drop. Nothing is
// deployed before it.
func (g gate) check(ctx context.Context, w io.Writer, req runner.Request, scs []*scenario.Scenario, custom *scenario.TargetSpec) error {
	if g.budget == 0 {
		return nil
	}
	nodes, local := 0, 0
	if needsNodes(scs) {
		var err error
		if nodes, local, err = runner.ClusterShape(ctx, req.Kubeconfig); err != nil {
			slog.Debug("cluster shape unknown: scenarios that need nodes are counted", "err", err)
			nodes, local = 0, 0
		}
	}
	parallel := req.Parallel
	if parallel == 0 {
		parallel = cluster.DefaultParallel(local)
	}
	est := runner.EstimateRun(scs, custom, nodes, parallel)
	what := "run"
	if g.name != "" {
		what = "profile " + g.name
	}
	if err := est.Fit(g.budget); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	line := fmt.Sprintf("%s: %s, within the %s budget", what, est, g.budget)
	if left := est.Left(); left != "" {
		line += "; NOT APPLICABLE (reported, not run): " + left
	}
	fmt.Fprintln(w, line)
	return nil
}

// needsNodes reports whether a scenario needs more than one node (the cluster must then be read).
func needsNodes(scs []*scenario.Scenario) bool {
	for _, sc := range scs {
		if sc.Target.Nodes > 1 {
			return true
		}
	}
	return false
}
