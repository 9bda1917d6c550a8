package lint

import (
	"fmt"
	"time"

	"github.com/probegate/probegate/internal/oracle"
)

// Config holds the limits rules compare against. The zero value is completed by Defaults.
type Config struct {
	// MaxReadinessWindow bounds a readiness probe's detection window F·P + timeout: how long users
	// keep reaching a broken instance before traffic moves.
	MaxReadinessWindow time.Duration
	// MaxInitialDelay is the largest liveness initialDelaySeconds accepted without a startupProbe: a
	// few seconds of grace are fine, more is a guess at the bootstrap time.
	MaxInitialDelay time.Duration
	// ColdStart is a measured cold start (0: unknown); ColdStartSource says where it came from.
	ColdStart       time.Duration
	ColdStartSource string
	// GraceMargin is the slack required on top of withdrawal + drain + cleanup (the oracle's margin).
	GraceMargin time.Duration
	// Propagation is the kubelet → EndpointSlice → kube-proxy delay added to readiness withdrawal;
	// a workload's probegate.dev/propagation-seconds annotation overrides it.
	Propagation time.Duration
	// Target is passed to `probegate run --target` in confirm lines; empty picks --variant for pods
	// labelled probegate.dev/variant (the bundled fixtures), or a placeholder.
	Target string
}

// VariantLabel marks the pods of a bundled fixture variant; confirm lines for them use --variant.
const VariantLabel = "probegate.dev/variant"

// Default limits.
const (
	DefaultMaxReadinessWindow = 15 * time.Second
	DefaultMaxInitialDelay    = 5 * time.Second
	DefaultGraceMargin        = oracle.DefaultMargin
	DefaultPropagation        = oracle.DefaultPropagation
)

// Defaults returns c with every unset limit filled in.
func (c Config) Defaults() Config {
	if c.MaxReadinessWindow == 0 {
		c.MaxReadinessWindow = DefaultMaxReadinessWindow
	}
	if c.MaxInitialDelay == 0 {
		c.MaxInitialDelay = DefaultMaxInitialDelay
	}
	if c.GraceMargin == 0 {
		c.GraceMargin = DefaultGraceMargin
	}
	if c.Propagation == 0 {
		c.Propagation = DefaultPropagation
	}
	if c.ColdStart > 0 && c.ColdStartSource == "" {
		c.ColdStartSource = "--cold-start"
	}
	return c
}

// Context is what a rule sees besides the workload it checks.
type Context struct {
	Config    Config
	Inventory *Inventory
}

// confirm renders the command that confirms a finding of r about w on a real cluster.
func (ctx *Context) confirm(r *Rule, w *Workload) string {
	if r.Scenario == "" {
		return r.ConfirmNote
	}
	return fmt.Sprintf("probegate run --scenario %s %s", r.Scenario, ctx.targetFlag(w))
}

// targetFlag picks the --target (or --variant) argument for w.
func (ctx *Context) targetFlag(w *Workload) string {
	if ctx.Config.Target != "" {
		return "--target " + ctx.Config.Target
	}
	if v := w.PodLabels[VariantLabel]; v != "" {
		return "--variant " + v
	}
	return fmt.Sprintf("--target <target file for %s>", w.Ref())
}

// propagation is the allowance for w: its annotation, else the configured one.
func (ctx *Context) propagation(w *Workload) time.Duration {
	if d, ok, err := declared(w, AnnotationPropagation); ok && err == nil {
		return d
	}
	return ctx.Config.Propagation
}

// Lint runs every rule over every workload in inv and returns the findings, sorted by position.
func Lint(inv *Inventory, cfg Config) []Finding {
	ctx := &Context{Config: cfg.Defaults(), Inventory: inv}
	var out []Finding
	for _, w := range inv.Workloads {
		for _, r := range Rules() {
			out = append(out, r.Check(ctx, w)...)
		}
	}
	sortFindings(out)
	return out
}
