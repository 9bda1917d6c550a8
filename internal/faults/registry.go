package faults

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// Definition is one fault type as its file registers it (like a toxiproxy toxic or a verdict rule):
// the name scenarios use, the parameters it accepts, what it needs from the target, how it proves
// its effect, which restart causes it brings about, and how to build it. Types, CheckParams, Build's
// skip reasons, Explains and docs/faults.md all derive from the registered definitions.
type Definition struct {
	Type string
	Doc  string // what the fault does, one sentence
	// Params are the accepted parameters, in the order the docs list them.
	Params []Param
	// Needs are the target's capabilities the fault acts through; Build skips the fault, with the
	// first missing capability's reason, on a target without one.
	Needs []Capability
	// Uses are capabilities the fault acts through when the run has them and does without
	// otherwise (never a reason to skip it): the runner provides them like Needs.
	Uses []Capability
	// Proof says how the fault proves its effect (its observe actions on the timeline).
	Proof string
	// Explains are the restart causes the fault brings about in a pod it acts on: a restart of that
	// pod with one of these causes is the fault's doing (see restartcause).
	Explains []timeline.RestartCause
	// Build returns the fault. Its parameters are checked and its needs met.
	Build func(a Args) (Fault, error)
	// Check, when set, says what is wrong with a set of parameters each valid alone (one of two
	// required, say).
	Check func(params map[string]string) error
	// Span, when set, is how long after it starts the fault keeps acting on this target at worst,
	// beyond its own duration (a rollout replacing replicas pods one at a time, each back in
	// rotation readyAfter after it answers): the runner makes the load cover it.
	Span func(params map[string]string, replicas int, readyAfter time.Duration) time.Duration
}

// Uses reports whether the registered fault typ needs or can use capability c.
func Uses(typ string, c Capability) bool {
	if Needs(typ, c) {
		return true
	}
	d, ok := Lookup(typ)
	return ok && slices.ContainsFunc(d.Uses, func(u Capability) bool { return u.Name == c.Name })
}

// Span is the registered fault's span on this target (0 when it declares none); see Definition.
func Span(typ string, params map[string]string, replicas int, readyAfter time.Duration) time.Duration {
	d, ok := Lookup(typ)
	if !ok || d.Span == nil {
		return 0
	}
	return d.Span(params, replicas, readyAfter)
}

// ParamKind is the type of a fault parameter's value.
type ParamKind string

// Parameter kinds.
const (
	KindDuration ParamKind = "duration" // a non-negative Go duration: "2s", "1500ms"
	KindNumber   ParamKind = "number"   // a positive number
	KindBool     ParamKind = "bool"
	KindPod      ParamKind = "pod"    // "random" or a pod name
	KindString   ParamKind = "string" // non-empty
)

// Param is one parameter a fault type accepts.
type Param struct {
	Name     string
	Kind     ParamKind
	Required bool
	Doc      string
}

// Args is what a registered Build gets: the scenario's fault and the target's env, and what every
// fault makes of them (a recorder named for the instance, the pod choice its "pod" param names).
type Args struct {
	Spec Spec
	Env  Env
	Rec  Recorder
	Pods PodChoice
}

// Param returns the parameter name and whether the scenario set it.
func (a Args) Param(name string) (string, bool) {
	v, ok := a.Spec.Params[name]
	return v, ok
}

// Duration returns the duration parameter name, def when unset.
func (a Args) Duration(name string, def time.Duration) time.Duration {
	if v, ok := a.Spec.Params[name]; ok {
		d, _ := time.ParseDuration(v)
		return d
	}
	return def
}

// OptDuration returns the duration parameter name, nil when unset.
func (a Args) OptDuration(name string) *time.Duration {
	if _, ok := a.Spec.Params[name]; !ok {
		return nil
	}
	d := a.Duration(name, 0)
	return &d
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Definition{}
)

// Register adds a fault type. It panics on a duplicate or malformed definition (a programming error).
func Register(d Definition) {
	if d.Type == "" || d.Build == nil || d.Doc == "" || d.Proof == "" {
		panic(fmt.Sprintf("faults: type %q needs a name, a doc, a proof and a builder", d.Type))
	}
	seen := map[string]bool{}
	for _, p := range d.Params {
		if p.Name == "" || p.Kind == "" || p.Doc == "" || seen[p.Name] {
			panic(fmt.Sprintf("faults: type %q: parameter %q needs a unique name, a kind and a doc", d.Type, p.Name))
		}
		seen[p.Name] = true
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[d.Type]; dup {
		panic(fmt.Sprintf("faults: type %q registered twice", d.Type))
	}
	registry[d.Type] = d
}

// Lookup returns the definition registered for a fault type.
func Lookup(typ string) (Definition, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	d, ok := registry[typ]
	return d, ok
}

// Definitions returns every registered fault type, sorted by type.
func Definitions() []Definition {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]Definition, 0, len(registry))
	for _, d := range registry {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

// Types lists the fault types, sorted.
func Types() []string {
	defs := Definitions()
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.Type
	}
	return out
}

// Explains reports whether a fault of type typ, acting on a pod, brings about a restart of that pod
// with the given cause. It is false for an unknown type.
func Explains(typ string, cause timeline.RestartCause) bool {
	d, ok := Lookup(typ)
	if !ok {
		return false
	}
	for _, c := range d.Explains {
		if c == cause {
			return true
		}
	}
	return false
}

// Needs reports whether a fault of type typ needs capability c (false for an unknown type): the
// runner asks it to provide what a scenario's faults need before building them (node agents).
func Needs(typ string, c Capability) bool {
	d, ok := Lookup(typ)
	if !ok {
		return false
	}
	for _, n := range d.Needs {
		if n.Name == c.Name {
			return true
		}
	}
	return false
}

// CheckParams returns an error naming the first unknown, malformed or missing parameter.
func CheckParams(typ string, params map[string]string) error {
	d, ok := Lookup(typ)
	if !ok {
		return fmt.Errorf("unknown fault type %q (known: %s)", typ, strings.Join(Types(), ", "))
	}
	known := make(map[string]Param, len(d.Params))
	for _, p := range d.Params {
		known[p.Name] = p
	}
	for k, v := range params {
		p, ok := known[k]
		if !ok {
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			sort.Strings(names)
			return fmt.Errorf("fault %s: unknown parameter %q (known: %s)", typ, k, strings.Join(names, ", "))
		}
		if err := p.Kind.check(v); err != nil {
			return fmt.Errorf("fault %s: parameter %s=%q: %w", typ, k, v, err)
		}
	}
	for _, p := range d.Params {
		if p.Required && params[p.Name] == "" {
			return fmt.Errorf("fault %s: parameter %s is required", typ, p.Name)
		}
	}
	if d.Check != nil {
		if err := d.Check(params); err != nil {
			return fmt.Errorf("fault %s: %w", typ, err)
		}
	}
	return nil
}

// check returns why v is not a value of kind k.
func (k ParamKind) check(v string) error {
	switch k {
	case KindDuration:
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		if d < 0 {
			return fmt.Errorf("negative duration")
		}
	case KindNumber:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return err
		}
		if f <= 0 {
			return fmt.Errorf("want a positive number")
		}
	case KindBool:
		_, err := strconv.ParseBool(v)
		return err
	case KindPod, KindString:
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("empty")
		}
	}
	return nil
}

// NotApplicable says why a target that declares d does not take a fault of spec's type at all
// (the first capability the declaration rules out), or "" when it may. Unlike Build's skip, it is
// known before anything is deployed, and it is the target's own statement, not a missing proof.
func NotApplicable(spec Spec, d Declared) string {
	def, ok := Lookup(spec.Type)
	if !ok {
		return ""
	}
	for _, c := range def.Needs {
		if c.undeclared == nil {
			continue
		}
		if why := c.undeclared(d, spec.Params); why != "" {
			return why
		}
	}
	return ""
}

// Build returns the fault for spec on env, or a skip reason when the target lacks a capability the
// fault needs (no toxiproxy, no admin port, no node access, not a Deployment), or an error for bad
// parameters.
func Build(spec Spec, env Env) (Fault, string, error) {
	if err := CheckParams(spec.Type, spec.Params); err != nil {
		return nil, "", err
	}
	d, _ := Lookup(spec.Type)
	for _, c := range d.Needs {
		if c.missing == nil {
			continue
		}
		if why := c.missing(env, spec.Params); why != "" {
			return nil, why, nil
		}
	}
	f, err := d.Build(Args{
		Spec: spec, Env: env,
		Rec:  Recorder{Timeline: env.Timeline, Name: spec.Name},
		Pods: PodChoice{Client: env.Client, Namespace: env.Namespace, Selector: env.Selector, Pod: spec.Params["pod"], Rand: env.Rand},
	})
	if err != nil {
		return nil, "", err
	}
	return f, "", nil
}
