package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/fixtures/manifests"
	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/lint"
	"github.com/probegate/probegate/internal/version"
	"github.com/probegate/probegate/scenarios"
)

func init() { register(newLintCmd) }

// lintOptions are the flags of `probegate lint`.
type lintOptions struct {
	output     string
	failOn     string
	namespace  string
	kubeconfig string
	context    string
	coldStart  time.Duration
	report     string
	explain    string
	listRules  bool
	disable    []string
	configFile string
	services   []string
	confirm    bool
	out        string
	cfg        lint.Config
}

func newLintCmd() *cobra.Command {
	o := &lintOptions{}
	cmd := &cobra.Command{
		Use:   "lint [FILE|DIR|-]...",
		Short: "Check probe timing, dependencies and shutdown settings statically",
		Long: `lint reads every workload with a pod template (Deployments, StatefulSets, DaemonSets, Jobs, CronJobs,
Pods, Argo Rollouts, ...) and the Services routing to them from YAML files and directories
(multi-document; "-" is stdin; a directory with a kustomization is built with kustomize first) or,
with --namespace, from a live namespace; other kinds are skipped and counted. It checks their probes against the probe contract: liveness windows against readiness
windows, startup budgets against measured cold starts, dependency checks behind 1 s timeouts, grace
periods against withdrawal + drain + cleanup, and more. Each finding says how to fix it with the
manifest's own numbers; for the bundled fixture (or with --target) it also names the probegate
scenario that would confirm it on a real cluster.

Targets declare facts lint cannot see with annotations on the workload or its pod template (the
timing ones are the same the harness's timing oracle reads; durations are "5", "2.5" or "1500ms"):
  probegate.dev/dependency-check-paths: "/health/deep,/healthz/db"  endpoints that check dependencies
  probegate.dev/withdrawal-seconds: "5"    keeps serving this long after SIGTERM (else: preStop sleep)
  probegate.dev/drain-seconds: "10"        longest admitted work finished after it stops accepting
  probegate.dev/cleanup-seconds: "1"       closing pools, flushing telemetry
  probegate.dev/readiness-lag-seconds      app time to turn a fault into a failing readiness endpoint
  probegate.dev/propagation-seconds        kubelet → EndpointSlice → kube-proxy allowance (default 2s)

  probegate.dev/cold-start-seconds: "45"  this workload's measured cold start (like --cold-start)
  probegate.dev/ignore: "PG007,PG009: reason"  silence rules for this workload (counted as suppressed)

Traffic-aware rules (identical probes, liveness before readiness, no readiness probe, no withdrawal
delay) judge a container by the Services that route to it. When no Service is in view for a
workload (its Services are kept in other files), it is judged as if one routed user traffic to each
port it declares (not metrics, health or debug ports; a StatefulSet is taken to be reached through
its headless peer Service) and each such finding says so; --services DIR reads the Services from
elsewhere without linting them.

Any kind with a pod template (spec.template or spec.jobTemplate: Argo Rollouts, Knative Services,
old apiVersions) is linted as a workload; other kinds (ConfigMap, webhook configurations, custom
resources, ...) are skipped and counted. A file or document that cannot be read is reported and the
rest is linted; -o json and -o sarif always print a complete document, with the error in it (JSON's
failed is then true). An empty or comment-only file is bad input; typed lists (DeploymentList, what
kubectl get -o yaml prints for one kind) are read like List; a hidden file (.name.yaml) in a
directory is skipped, named and counted (name it to lint it), and hidden directories are not entered.

--confirm turns findings into evidence: each finding's scenario runs on the cluster against the
workload it is about (as --target's file deploys it, or as the bundled fixture variant it is), once
per scenario, and the finding is marked confirmed (a verdict it predicts to fail FAILed), refuted
(they all PASSed: the problem did not show) or inconclusive (saying why). Refuted findings still
count for --fail-on: nothing is lowered silently. The runs' reports go to --out.

Every finding states its fix with the manifest's numbers. --disable and a --config file silence
rules; suppressed findings are counted and listed in JSON and SARIF, never silently dropped.

Exit codes: 0 no finding at or above --fail-on (default warning), 1 such findings, 2 bad input
(missing file, unparseable YAML, unrendered Helm template, unreachable cluster), even when the
other files' findings were printed, or a --confirm run that could not be set up; with --confirm,
3 when nothing is at or above --fail-on but some finding's confirmation is inconclusive (its
scenario did not complete or could not show it), 130 or 143 interrupted.`,
		Example: `  probegate lint fixtures/manifests/
  probegate lint -o sarif deploy.yaml > lint.sarif
  probegate lint --cold-start 45s app.yaml
  probegate lint fixtures/manifests/deep-liveness.yaml --confirm
  probegate lint examples/podinfo/upstream/kustomize --target examples/podinfo/target.yaml --confirm
  probegate lint --report out/report.json app.yaml
  probegate lint --namespace shop --kubeconfig ~/.kube/config
  probegate lint --explain PG002`,
		RunE: func(cmd *cobra.Command, args []string) error { return runLint(cmd, o, args) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "text", "output format: text, json or sarif (SARIF 2.1.0)")
	f.StringVar(&o.failOn, "fail-on", "warning", "exit 1 when a finding is at or above this severity: info, warning, error or none")
	f.StringVarP(&o.namespace, "namespace", "n", "", "lint the workloads of this live namespace instead of files")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig for --namespace, and the cluster --confirm runs on (default for --namespace: $KUBECONFIG or ~/.kube/config; for --confirm: the local kind cluster)")
	f.StringVar(&o.context, "context", "", "kubeconfig context for --namespace")
	f.DurationVar(&o.coldStart, "cold-start", 0, "a measured cold start (e.g. 45s): startup budgets below it are errors")
	f.StringVar(&o.report, "report", "", "read the measured cold start from a previous probegate report.json")
	f.DurationVar(&o.cfg.MaxReadinessWindow, "max-readiness-window", lint.DefaultMaxReadinessWindow, "largest acceptable readiness detection window F·P + timeout")
	f.DurationVar(&o.cfg.MaxInitialDelay, "max-initial-delay", lint.DefaultMaxInitialDelay, "largest liveness initialDelaySeconds accepted without a startupProbe")
	f.DurationVar(&o.cfg.GraceMargin, "grace-margin", lint.DefaultGraceMargin, "slack required in terminationGracePeriodSeconds beyond withdrawal + drain + cleanup")
	f.DurationVar(&o.cfg.Propagation, "propagation", lint.DefaultPropagation, "kubelet → EndpointSlice → kube-proxy delay added to readiness withdrawal")
	f.StringVar(&o.cfg.Target, "target", "", "target file to name in the confirm commands (probegate run --target)")
	f.StringVar(&o.explain, "explain", "", "print one rule's explanation, fix and confirming scenario (by ID or name) and exit")
	f.BoolVar(&o.listRules, "list-rules", false, "print every rule with its explanation and exit")
	f.StringSliceVar(&o.disable, "disable", nil, "silence rules by ID or name (repeatable, comma-separated); their findings are counted as suppressed")
	f.BoolVar(&o.confirm, "confirm", false, "run each finding's scenario on the cluster against the linted workload (--target, or a bundled fixture variant) and mark it confirmed, refuted or inconclusive")
	f.StringVar(&o.out, "out", "", "with --confirm: report directory of the runs (default _out/lint-confirm-<time>)")
	f.StringSliceVar(&o.services, "services", nil, "files or directories whose Services are read to see what routes to the workloads, not linted themselves (repeatable); without any Service in view a workload is judged as if one routed to its ports")
	f.StringVar(&o.configFile, "config", "", "lint config file (YAML: disable, failOn, maxReadinessWindow, maxInitialDelay, graceMargin, propagation, coldStart); flags win")
	return cmd
}

// matrixEvidence derives which rules the embedded mutation matrix shows on the embedded fixture
// variants, as RULES.md lists them.
func matrixEvidence() ([]lint.MatrixEvidence, error) {
	_, m, err := scenarios.Load(scenarios.Vocabulary())
	if err != nil {
		return nil, fmt.Errorf("lint: load the mutation matrix: %w", err)
	}
	rows := make([]lint.MatrixRow, 0, len(m.Mutations))
	for _, mu := range m.Mutations {
		rows = append(rows, lint.MatrixRow{Variant: mu.Variant, Scenario: mu.Scenario, Verdicts: mu.Rules()})
	}
	ev, err := lint.ShownByMatrix(rows, manifests.Read)
	if err != nil {
		return nil, fmt.Errorf("lint: derive the matrix evidence: %w", err)
	}
	return ev, nil
}

func runLint(cmd *cobra.Command, o *lintOptions, args []string) error {
	out := cmd.OutOrStdout()
	if o.listRules {
		matrix, err := matrixEvidence()
		if err != nil {
			return withCode(ExitError, err)
		}
		for i, r := range lint.Rules() {
			if i > 0 {
				fmt.Fprintln(out)
			}
			if err := lint.WriteRule(out, r, matrix); err != nil {
				return withCode(ExitError, err)
			}
		}
		return nil
	}
	if o.explain != "" {
		r, ok := lint.RuleByID(o.explain)
		if !ok {
			return withCode(ExitError, fmt.Errorf("lint: no rule %q (see probegate lint --list-rules)", o.explain))
		}
		matrix, err := matrixEvidence()
		if err != nil {
			return withCode(ExitError, err)
		}
		return withCode(ExitError, lint.WriteRule(out, r, matrix))
	}

	write, err := lintWriter(o.output)
	if err != nil {
		return withCode(ExitError, err)
	}
	// From here on, every error still prints a complete document in the chosen format.
	fail := func(err error) error {
		if o.output != "text" && o.output != "" {
			rep := lint.ErrorReport(err, lint.Warning)
			rep.Version = version.String()
			if werr := write(out, rep); werr != nil {
				return withCode(ExitError, fmt.Errorf("lint: write report: %w (after: %v)", werr, err))
			}
		}
		return withCode(ExitError, err)
	}
	cfg, failOn, err := lintConfig(cmd, o)
	if err != nil {
		return fail(err)
	}

	var inv *lint.Inventory
	switch {
	case o.namespace != "" && len(args) > 0:
		return fail(errors.New("lint: give manifest files or --namespace, not both"))
	case o.namespace != "" && len(o.services) > 0:
		return fail(errors.New("lint: --services reads Services for manifest files; a live namespace has its own"))
	case o.namespace != "":
		client, err := lintClient(o.kubeconfig, o.context)
		if err != nil {
			return fail(err)
		}
		inv, err = lint.LoadNamespace(cmd.Context(), client, o.namespace)
		if err != nil {
			return fail(fmt.Errorf("lint: %w", err))
		}
	default:
		inv, err = lint.LoadPaths(args, cmd.InOrStdin())
		if err != nil {
			return fail(err)
		}
		lint.AddRoutingServices(inv, o.services)
	}

	rep := lint.NewReport(inv, cfg, failOn)
	rep.Version = version.String()
	if o.confirm {
		dir := o.out
		if dir == "" {
			dir = "_out/lint-confirm-" + timestamp()
		}
		if err := confirmFindings(cmd.Context(), rep, cfg.Target, o.kubeconfig, dir); err != nil {
			return fail(err)
		}
	}
	slog.Debug("lint", "workloads", rep.Workloads, "findings", len(rep.Findings), "suppressed", len(rep.Suppressed), "unreadable", len(rep.Problems))
	if err := write(out, rep); err != nil {
		return withCode(ExitError, fmt.Errorf("lint: write report: %w", err))
	}
	if n := len(rep.Problems); n > 0 {
		msg := rep.Problems[0].Error()
		if n > 1 {
			msg += fmt.Sprintf(" (and %d more unreadable documents)", n-1)
		}
		return withCode(ExitError, fmt.Errorf("%s; everything else was linted", msg))
	}
	return lintOutcome(rep)
}

// lintOutcome is the exit of a linted (and perhaps confirmed) report: 1 when a finding is at or
// above --fail-on, else 3 when a finding's confirmation could not decide (inconclusive: the scenario
// did not complete, a verdict was INCONCLUSIVE, nothing could deploy the workload), else 0.
func lintOutcome(rep *lint.Report) error {
	if rep.Failed() {
		return withCode(ExitFail, errFailed)
	}
	if n := rep.Confirmations()[lint.Unconfirmed]; n > 0 {
		return withCode(ExitInconclusive, fmt.Errorf("lint --confirm: %d of %d findings could be neither confirmed nor refuted (inconclusive; each one's confirmation says why)", n, len(rep.Findings)))
	}
	return nil
}

// lintConfig merges the config file (when given) under the flags that were set and resolves the
// cold start, the disabled rules and the --fail-on threshold.
func lintConfig(cmd *cobra.Command, o *lintOptions) (lint.Config, lint.Severity, error) {
	cfg := o.cfg
	failOnText := o.failOn
	coldStart := o.coldStart
	changed := cmd.Flags().Changed
	disable := map[string]lint.Suppression{}
	if o.configFile != "" {
		fc, err := lint.LoadConfigFile(o.configFile)
		if err != nil {
			return cfg, 0, err
		}
		for _, d := range fc.Disable {
			disable[d.Rule] = lint.Suppression{Kind: "config", Reason: d.Reason}
		}
		if fc.FailOn != "" && !changed("fail-on") {
			failOnText = fc.FailOn
		}
		for _, v := range []struct {
			flag string
			dst  *time.Duration
			src  time.Duration
		}{{"max-readiness-window", &cfg.MaxReadinessWindow, fc.MaxReadinessWindow}, {"max-initial-delay", &cfg.MaxInitialDelay, fc.MaxInitialDelay},
			{"grace-margin", &cfg.GraceMargin, fc.GraceMargin}, {"propagation", &cfg.Propagation, fc.Propagation}, {"cold-start", &coldStart, fc.ColdStart}} {
			if v.src > 0 && !changed(v.flag) {
				*v.dst = v.src
			}
		}
	}
	flagged, err := lint.ParseDisable(o.disable)
	if err != nil {
		return cfg, 0, fmt.Errorf("lint: %w", err)
	}
	for id, s := range flagged {
		disable[id] = s
	}
	cfg.Disable = disable
	failOn, err := lint.ParseSeverity(failOnText)
	if err != nil {
		return cfg, 0, fmt.Errorf("lint: --fail-on: %w", err)
	}
	for name, d := range map[string]time.Duration{
		"--cold-start": coldStart, "--max-readiness-window": cfg.MaxReadinessWindow,
		"--max-initial-delay": cfg.MaxInitialDelay, "--grace-margin": cfg.GraceMargin, "--propagation": cfg.Propagation,
	} {
		if d < 0 {
			return cfg, 0, fmt.Errorf("lint: %s must not be negative, got %s", name, d)
		}
	}
	switch {
	case o.report != "" && coldStart > 0:
		return cfg, 0, errors.New("lint: give --cold-start or --report, not both")
	case o.report != "":
		cfg.ColdStart, cfg.ColdStartSource, err = lint.ColdStartFromReport(o.report)
		if err != nil {
			return cfg, 0, err
		}
	case coldStart > 0:
		cfg.ColdStart, cfg.ColdStartSource = coldStart, "--cold-start "+coldStart.String()
	}
	return cfg, failOn, nil
}

// lintWriter picks the report writer for an --output value.
func lintWriter(format string) (func(io.Writer, *lint.Report) error, error) {
	switch format {
	case "text", "":
		return lint.WriteText, nil
	case "json":
		return lint.WriteJSON, nil
	case "sarif":
		return lint.WriteSARIF, nil
	}
	return nil, fmt.Errorf("lint: unknown output format %q (want text, json or sarif)", format)
}

// lintClient builds a clientset from a kubeconfig path (or the default loading rules) and context.
func lintClient(kubeconfig, context string) (kubernetes.Interface, error) {
	cfg, err := cluster.LoadKubeconfig(kubeconfig, context)
	if err != nil {
		return nil, fmt.Errorf("lint: load kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("lint: build client: %w", err)
	}
	return client, nil
}
