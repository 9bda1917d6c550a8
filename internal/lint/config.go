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
	// Disable silences rules by ID: their findings are kept as suppressed, counted, and never fail a
	// run. The value says who disabled the rule (Kind "flag" or "config") and why.
	Disable map[string]Suppression
}

// VariantLabel marks the pods of a bundled fixture variant; confirm lines for them use --variant.
const VariantLabel = "probegate.dev/variant"

// Default limits.
const (
	DefaultMaxReadinessWindow = 60 * time.Second
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

	services   *serviceIndex           // built on first use
	configMaps map[string][]*ConfigMap // by name, built on first use
}

// configMap returns the ConfigMap in view that a workload in namespace ns names name (a namespace
// left empty on either side matches any), or nil.
func (ctx *Context) configMap(ns, name string) *ConfigMap {
	if ctx.configMaps == nil {
		ctx.configMaps = map[string][]*ConfigMap{}
		for _, cm := range ctx.Inventory.ConfigMaps {
			ctx.configMaps[cm.Name] = append(ctx.configMaps[cm.Name], cm)
		}
	}
	for _, cm := range ctx.configMaps[name] {
		if cm.Namespace == "" || ns == "" || cm.Namespace == ns {
			return cm
		}
	}
	return nil
}

// serviceIndex returns the index of the inventory's Services, building it on first use.
func (ctx *Context) serviceIndex() *serviceIndex {
	if ctx.services == nil {
		all := append(append([]*Service{}, ctx.Inventory.Services...), ctx.Inventory.RoutingServices...)
		ctx.services = newServiceIndex(all)
	}
	return ctx.services
}

// confirm renders the command that confirms a finding of r about w on a real cluster, or "" when
// no command could run as printed: the rule has no scenario, or w is neither a bundled fixture
// variant nor covered by a --target file.
func (ctx *Context) confirm(r *Rule, w *Workload) string {
	if r.Scenario == "" {
		return ""
	}
	switch v := w.PodLabels[VariantLabel]; {
	case ctx.Config.Target != "":
		return fmt.Sprintf("probegate run --scenario %s --target %s", r.Scenario, ctx.Config.Target)
	case v != "":
		return fmt.Sprintf("probegate run --scenario %s --variant %s", r.Scenario, v)
	}
	return ""
}

// propagation is the allowance for w: its annotation, else the configured one.
func (ctx *Context) propagation(w *Workload) time.Duration {
	if d, ok, err := declared(w, AnnotationPropagation); ok && err == nil {
		return d
	}
	return ctx.Config.Propagation
}

// Lint runs every rule over every workload in inv and returns the findings, sorted by position. A
// finding that only restates another on the same container and probe is dropped; findings of
// disabled rules, or of rules the workload's probegate.dev/ignore annotation names, are returned
// with Suppressed set.
func Lint(inv *Inventory, cfg Config) []Finding {
	ctx := &Context{Config: cfg.Defaults(), Inventory: inv}
	var out []Finding
	for _, w := range inv.Workloads {
		var fs []Finding
		for _, r := range Rules() {
			fs = append(fs, r.Check(ctx, w)...)
		}
		fs = dropRestated(fs)
		ignored := ignoredRules(w)
		for i := range fs {
			if s, ok := ctx.Config.Disable[fs[i].RuleID]; ok {
				fs[i].Suppressed = &s
			} else if s, ok := ignored[fs[i].RuleID]; ok {
				fs[i].Suppressed = &s
			}
		}
		out = append(out, fs...)
	}
	sortFindings(out)
	return out
}

// dropRestated removes the findings a rule's Restates list names when that rule found something on
// the same container and probe: one finding per root cause.
func dropRestated(fs []Finding) []Finding {
	type key struct{ rule, container, probe string }
	restated := map[key]bool{}
	for _, f := range fs {
		r, _ := RuleByID(f.RuleID)
		for _, id := range r.Restates {
			restated[key{id, f.Container, f.Probe}] = true
		}
	}
	out := fs[:0]
	for _, f := range fs {
		if !restated[key{f.RuleID, f.Container, f.Probe}] {
			out = append(out, f)
		}
	}
	return out
}
