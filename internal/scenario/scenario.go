// Package scenario defines probegate's scenario files: what to deploy, what load to drive, which
// faults to inject when, and which verdicts must then hold. Files are YAML, validated on load with
// errors that name the file, the line and the field path.
package scenario

import (
	"slices"
	"sort"
	"time"
)

// Scenario is one validated scenario file.
type Scenario struct {
	// Name identifies the scenario (a DNS label; it prefixes the run's namespace).
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Labels group scenarios by what they exercise (rollout, deletion, readiness, ...); a gate
	// profile may name a label instead of listing its scenarios.
	Labels []string `json:"labels,omitempty"`
	// File is where the scenario was read from.
	File string `json:"file,omitempty"`
	// Seed drives every random choice of the run (which pod, when inside a window).
	Seed int64 `json:"seed"`
	// Parallel says the scenario may share the cluster with other scenarios in their own
	// namespaces. Scenarios that load the whole machine (overload) run alone.
	Parallel bool    `json:"parallel"`
	Target   Target  `json:"target"`
	Load     Load    `json:"load"`
	Faults   []Fault `json:"faults,omitempty"`
	// Settle is how long observers keep recording after the load stops.
	Settle time.Duration `json:"settle"`
	Expect []Expectation `json:"expect"`
	// Oracle holds timing-oracle options (propagation, withdrawal, drain, ...) that override the
	// pod's annotations and the oracle's defaults.
	Oracle map[string]string `json:"oracle,omitempty"`
}

// Target selects what the scenario runs against.
type Target struct {
	// Variant is a fixture variant ("good", "deep-liveness", ...). A --target file replaces it.
	Variant  string `json:"variant"`
	Replicas int    `json:"replicas"`
	// Bootstrap, when set, overrides the target's simulated bootstrap time (cold starts).
	Bootstrap time.Duration `json:"bootstrap,omitempty"`
	// Nodes is the least number of schedulable nodes the scenario needs (node faults: 2). A
	// cluster with fewer leaves the scenario out of the default suite, and reports it INCONCLUSIVE
	// when it is named.
	Nodes int `json:"nodes,omitempty"`
}

// Load is the constant-rate HTTP load driven at the target during the scenario.
type Load struct {
	Rate      int           `json:"rate"`
	Duration  time.Duration `json:"duration"`
	KeepAlive bool          `json:"keepAlive"`
	// Path is the request path on the bundled fixture, "/work" by default. Any other target is
	// asked for its own default request, or, when Takes is set, for its request that takes that long.
	Path string `json:"path"`
	// Takes, when set, says the scenario needs requests the server holds for about this long (a
	// drain under long requests); a target without such a request cannot take the scenario.
	Takes time.Duration `json:"takes,omitempty"`
	// Timeout bounds each request.
	Timeout time.Duration `json:"timeout"`
	// Clients is how many independent clients (connection pools) share the load, taking requests
	// in turn: 1 by default. With keep-alive, one client runs over one or two connections, so a
	// pod fault may hit a pod the load does not use; N clients hold about N connections.
	Clients int `json:"clients,omitempty"`
}

// Fault is one fault injected At after the load starts and reverted Duration later (zero Duration:
// a one-shot action such as a pod deletion). With Until set, the fault is held until that moment of
// the target's own probe timing and then Duration more; with AtLeast set, Duration is a minimum:
// the fault lasts at least until that moment plus SizingMargin, every later fault and the load's
// end move by what it gained. The runner resolves both from the deployed pod's probes before the
// load starts.
type Fault struct {
	Type     string            `json:"type"`
	At       time.Duration     `json:"at"`
	Duration time.Duration     `json:"duration,omitempty"`
	Until    string            `json:"until,omitempty"`
	AtLeast  string            `json:"atLeast,omitempty"`
	Params   map[string]string `json:"params,omitempty"`
	// Line is the fault's line in its file.
	Line int `json:"-"`
}

// End is when the fault is reverted, as an offset from the load start.
func (f Fault) End() time.Duration { return f.At + f.Duration }

// UntilReadinessWithdrawn holds a fault until the target's readiness has withdrawn the pod at worst
// (the oracle's readiness detection deadline: failureThreshold × period + timeout + propagation).
const UntilReadinessWithdrawn = "readiness-withdrawn"

// UntilValues are the moments a fault may be held until (Until, AtLeast).
var UntilValues = []string{UntilReadinessWithdrawn}

// SizingMargin is what a fault sized by AtLeast lasts past the moment it names: time for the
// withdrawal to be seen on the EndpointSlice and the traffic to move before the fault ends.
const SizingMargin = 5 * time.Second

// Expectation names a verdict rule that must PASS, with its parameters.
type Expectation struct {
	Rule   string            `json:"rule"`
	Params map[string]string `json:"params,omitempty"`
	// Tolerance is the one-line reason for the tolerance parameters (hand-set allowances) in Params.
	Tolerance string `json:"tolerance,omitempty"`
	Line      int    `json:"-"`
}

// Span is the scenario's fault + oracle time: the load (during which faults run and are judged)
// plus the settle time after it. Setup and teardown are not part of it.
func (s *Scenario) Span() time.Duration { return s.Load.Duration + s.Settle }

// HasLabel reports whether the scenario carries label.
func (s *Scenario) HasLabel(label string) bool { return slices.Contains(s.Labels, label) }

// Rules returns the names of the scenario's expected rules, in file order.
func (s *Scenario) Rules() []string {
	out := make([]string, 0, len(s.Expect))
	for _, e := range s.Expect {
		out = append(out, e.Rule)
	}
	return out
}

// FaultTypes returns the distinct fault types the scenario injects, sorted.
func (s *Scenario) FaultTypes() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range s.Faults {
		if !seen[f.Type] {
			seen[f.Type] = true
			out = append(out, f.Type)
		}
	}
	sort.Strings(out)
	return out
}

// Defaults applied to omitted fields.
const (
	DefaultVariant  = "good"
	DefaultReplicas = 3
	DefaultSeed     = 1
	DefaultPath     = "/work"
	DefaultTimeout  = 5 * time.Second
	DefaultSettle   = 5 * time.Second
)
