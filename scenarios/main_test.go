package scenarios

// The e2e-framework suite: TestMain creates or reuses the kind cluster (the same cluster.Create the
// CLI uses; --kubeconfig runs on an existing cluster instead), loads the images, and every
// scenario of the catalogue is one feature whose verdicts are its assessments. Each feature runs
// through runner.Run, the code path of `probegate run`, in its own namespace and port slot.
//
//	go test ./scenarios/...                                   # unit checks + every scenario
//	go test ./scenarios/... -args --feature=db-slowness       # one scenario
//	go test ./scenarios/... -run MutationMatrix -args --labels=kind=mutation
//
// Reports go to $PROBEGATE_SUITE_OUT (default _out/suite) when the suite finishes; at most
// $PROBEGATE_SUITE_SLOTS scenarios (default: as many as `probegate run` would) run side by side.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/e2e-framework/pkg/env"
	"sigs.k8s.io/e2e-framework/pkg/envconf"

	"github.com/probegate/probegate/fixtures/target/config"
	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/runner"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/version"
	"github.com/probegate/probegate/reports"
)

var (
	testenv env.Environment
	envCfg  *envconf.Config
	// suite is set by the Setup step; nil under -short.
	suite *suiteEnv
)

// suiteEnv is what every feature shares: the runner (and its port slots), the catalogue and the
// reports collected for the final report directory.
type suiteEnv struct {
	runner  *runner.Runner
	cat     *scenario.Catalogue
	matrix  *scenario.Matrix
	turns   *turns // the order the runs take the runner's slots in
	mu      sync.Mutex
	reports []reports.ScenarioReport
	started time.Time
	// schedulable is how many nodes take the target's pods: scenarios that need more are skipped.
	schedulable int
	// failures are the suite's failed checks, repeated at its end: a CI log's tail shows why.
	failures []string
}

// fail fails t and keeps the message for the suite's closing summary.
func (s *suiteEnv) fail(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.failures = append(s.failures, t.Name()+": "+msg)
	s.mu.Unlock()
	t.Error(msg)
}

func TestMain(m *testing.M) {
	cfg, err := envconf.NewFromFlags()
	if err != nil {
		fmt.Fprintf(os.Stderr, "scenarios: %v\n", err)
		os.Exit(2)
	}
	envCfg = cfg
	if testing.Short() {
		// Unit checks only: no cluster.
		os.Exit(m.Run())
	}
	if !cfg.FailFast() {
		// Features wait for a port slot, so running them "in parallel" is bounded by the slots.
		cfg.WithParallelTestEnabled()
	}
	testenv = env.NewWithConfig(cfg)
	testenv.Setup(setupSuite)
	testenv.Finish(writeSuiteReport)
	os.Exit(testenv.Run(m))
}

// setupSuite connects to the cluster (creating kind when no --kubeconfig is given), loads the
// images every variant needs and builds the runner.
func setupSuite(ctx context.Context, cfg *envconf.Config) (context.Context, error) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	vocab := Vocabulary()
	cat, matrix, err := Load(vocab)
	if err != nil {
		return ctx, err
	}
	setupCtx, cancel := context.WithTimeout(ctx, 45*time.Minute)
	defer cancel()
	c, kc, err := cluster.Connect(setupCtx, cfg.KubeconfigFile(), log)
	if err != nil {
		return ctx, err
	}
	nodes := 0
	if kc != nil {
		nodes = len(kc.Nodes)
	}
	slots, err := suiteSlots(nodes)
	if err != nil {
		return ctx, err
	}
	r := runner.New(c, kc, nil, runner.Options{Logger: log, Parallel: cluster.DefaultParallel(nodes), Slots: slots})
	if err := r.Preflight(setupCtx, config.Names()); err != nil {
		return ctx, err
	}
	schedulable, err := cluster.SchedulableNodes(setupCtx, c.Client)
	if err != nil {
		return ctx, err
	}
	suite = &suiteEnv{runner: r, cat: cat, matrix: matrix, started: time.Now(), schedulable: schedulable, turns: newTurns(slots)}
	return ctx, nil
}

// suiteSlots bounds how many scenarios the suite runs side by side: PROBEGATE_SUITE_SLOTS (1 to
// cluster.Slots), else as many as `probegate run` would (cluster.DefaultParallel: 2 on a 2-core
// machine with one node). With all four port slots, scenarios deploying together on two cores
// delayed probes and endpoint updates past the oracle's windows (recovery-within 6.7 s against
// 4.7 s in db-outage, 5.2 s in flapping-dependency, a rolling update 15 s below its ready minimum).
func suiteSlots(nodes int) (int, error) {
	v := os.Getenv("PROBEGATE_SUITE_SLOTS")
	if v == "" {
		return cluster.DefaultParallel(nodes), nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > cluster.Slots {
		return 0, fmt.Errorf("PROBEGATE_SUITE_SLOTS=%q: want a number from 1 to %d", v, cluster.Slots)
	}
	return n, nil
}

// run executes one scenario (already given its variant and seed) on a free port slot.
func (s *suiteEnv) run(ctx context.Context, sc *scenario.Scenario) *reports.ScenarioReport {
	if sc.Parallel {
		defer s.turns.shared(sc.Span())()
	} else {
		defer s.turns.exclusive()()
	}
	rep := s.runner.RunOne(ctx, sc)
	s.mu.Lock()
	s.reports = append(s.reports, *rep)
	s.mu.Unlock()
	return rep
}

// writeSuiteReport writes every scenario run of the suite as one report directory.
func writeSuiteReport(ctx context.Context, cfg *envconf.Config) (context.Context, error) {
	if suite == nil || len(suite.reports) == 0 {
		return ctx, nil
	}
	out := os.Getenv("PROBEGATE_SUITE_OUT")
	if out == "" {
		out = filepath.Join("..", "_out", "suite")
	}
	rep := &reports.Report{
		ProbegateVersion: version.String(), KubernetesVersion: suite.runner.Conn.Version,
		Cluster: suite.runner.Conn.Name, Started: suite.started, Finished: time.Now(),
		Command: os.Args, Scenarios: suite.reports,
	}
	if err := reports.WriteAll(out, rep); err != nil {
		return ctx, fmt.Errorf("write suite report: %w", err)
	}
	var span time.Duration
	for _, s := range suite.reports {
		if sc, ok := suite.cat.Get(s.Name); ok {
			span += sc.Span()
		}
	}
	wall := rep.Finished.Sub(rep.Started)
	fmt.Fprintf(os.Stderr, "suite: %d scenario runs, wall %s, sum of fault+oracle spans %s (ratio %.2f); report in %s\n",
		len(suite.reports), wall.Round(time.Second), span, wall.Seconds()/span.Seconds(), out)
	suite.mu.Lock()
	defer suite.mu.Unlock()
	for _, f := range suite.failures {
		fmt.Fprintf(os.Stderr, "suite: FAILED %s\n", f)
	}
	return ctx, nil
}

// requireSuite skips under -short and fails when the Setup step did not run.
func requireSuite(t *testing.T) *suiteEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("runs scenarios on the kind cluster (skipped with -short)")
	}
	if suite == nil {
		t.Fatal("suite setup did not run")
	}
	return suite
}
