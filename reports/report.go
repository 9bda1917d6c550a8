// Package reports turns a finished run into what its readers need: report.json (the versioned
// record a replay starts from), junit.xml for CI, a compact terminal summary, and report.html, one
// self-contained page with an SVG timeline per scenario. Every writer reads a Report and the
// scenario's timeline and requests; nothing here talks to a cluster.
package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
)

// SchemaVersion is the version of report.json this package writes. It rises on any change a reader
// must know about; reports/schema/report.schema.json describes it. Version 2 replaced the SKIP
// verdict status with INCONCLUSIVE (and Unshown saying why); a version 1 report still reads, its
// SKIPs as INCONCLUSIVE. Version 3 added NOT APPLICABLE (a scenario the target does not take by
// its declaration, with the reason in the scenario's notApplicable). Version 4 added each verdict's
// measure (the quantity it judged and its bound, for probegate compare); older reports have none.
// Version 5 added a scenario's connections (a gRPC load's, each with the pods its calls went to).
const SchemaVersion = 5

// skipV1 is the status version 1 reports gave a verdict whose fault was skipped.
const skipV1 verdict.Status = "SKIP"

// File names inside a report directory.
const (
	ReportFile   = "report.json"
	JUnitFile    = "junit.xml"
	HTMLFile     = "report.html"
	TimelineFile = "timeline.jsonl"
	RequestsFile = "requests.jsonl"
)

// StatusError marks a scenario the harness could not finish: its verdicts cannot be trusted.
const StatusError verdict.Status = "ERROR"

// Report is one run of probegate: the versions it ran with, when, and every scenario's outcome.
type Report struct {
	SchemaVersion int `json:"schemaVersion"`
	// ProbegateVersion is the harness's version (module version or commit).
	ProbegateVersion string `json:"probegateVersion"`
	// KubernetesVersion is the cluster's server version (for example "v1.34.4").
	KubernetesVersion string `json:"kubernetesVersion"`
	// Cluster names the cluster the run used (kind cluster name or kubeconfig context).
	Cluster  string    `json:"cluster,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Command is the probegate command line that produced the run.
	Command   []string         `json:"command,omitempty"`
	Scenarios []ScenarioReport `json:"scenarios"`
	// Interrupted names the signal that stopped the run early ("SIGINT", "SIGTERM"; "cancelled"
	// when a library caller's context ended); empty when the run finished. Scenarios it cut short
	// carry the interruption as their Error.
	Interrupted string `json:"interrupted,omitempty"`
}

// ScenarioReport is one scenario run against one target: what ran, the oracle's windows, the
// verdicts with their evidence, summary figures and where its timeline and requests are saved.
type ScenarioReport struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Variant is the fixture variant (good, bad-liveness-db, ...) or empty for a custom target.
	Variant string `json:"variant,omitempty"`
	// Target is the workload under test (image, Deployment or --target reference).
	Target string `json:"target,omitempty"`
	// Namespace is where the scenario ran.
	Namespace string `json:"namespace,omitempty"`
	// Seed is the seed of every random choice the scenario made (victim pods, jitter).
	Seed     int64     `json:"seed"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Replay is the command line that reruns exactly this scenario.
	Replay string `json:"replay,omitempty"`
	// Oracle is the timing oracle computed from the target's pod spec (windows relative to a
	// fault's start); each verdict's Windows place the ones it judged against on the timeline.
	Oracle *oracle.Oracle `json:"oracle,omitempty"`
	// Windows are further windows placed on the timeline (offsets from its start) that no verdict
	// carries, drawn beside the verdicts' own.
	Windows  []verdict.Window `json:"windows,omitempty"`
	Verdicts []verdict.Result `json:"verdicts"`
	Summary  *Summary         `json:"summary,omitempty"`
	// Attribution is how many requests name the pod that served them (from the header or the
	// node's conntrack table), with conntrack's agreement with the header when it ran. WriteAll
	// computes it from Requests when it is nil.
	Attribution *timeline.Attribution `json:"attribution,omitempty"`
	// TimelinePath and RequestsPath are relative to the report directory, with forward slashes.
	TimelinePath string `json:"timelinePath,omitempty"`
	RequestsPath string `json:"requestsPath,omitempty"`
	// Error is set when the harness could not finish the scenario.
	Error string `json:"error,omitempty"`
	// NotApplicable says why the target does not take the scenario (nothing was run): its
	// verdicts are NOT APPLICABLE and the exit code does not count it.
	NotApplicable string `json:"notApplicable,omitempty"`
	// Capacity is the target's capacity as the run measured it before sizing an overload from it
	// (nil when no overload asked).
	Capacity *Capacity `json:"capacity,omitempty"`
	// Connections are the long-lived connections a gRPC load held, each with the pods its calls
	// were attributed to (nil for HTTP load).
	Connections []Connection `json:"connections,omitempty"`

	// Timeline and Requests are the recorded data. WriteAll saves them at TimelinePath and
	// RequestsPath; LoadDir reads them back. They are never part of report.json itself.
	Timeline *timeline.Timeline `json:"-"`
	Requests []timeline.Request `json:"-"`
}

// PlacedWindow is an oracle window on the timeline with the rules that judged against it.
type PlacedWindow struct {
	verdict.Window
	Rules []string
	// Failed is set when a failed verdict carries the window; Extra when the scenario's own
	// Windows list it.
	Failed, Extra bool
}

// PlacedWindows is the union of the scenario's Windows and every verdict's Windows, each listed
// once (by name, pod and span) with the rules that carry it, in order of start.
func (s *ScenarioReport) PlacedWindows() []PlacedWindow {
	var out []PlacedWindow
	index := map[verdict.Window]int{}
	add := func(w verdict.Window, rule string, failed, extra bool) {
		key := verdict.Window{Name: w.Name, Pod: w.Pod, From: w.From, To: w.To}
		i, ok := index[key]
		if !ok {
			out = append(out, PlacedWindow{Window: w})
			i = len(out) - 1
			index[key] = i
		}
		out[i].Failed = out[i].Failed || failed
		out[i].Extra = out[i].Extra || extra
		if rule != "" && !contains(out[i].Rules, rule) {
			out[i].Rules = append(out[i].Rules, rule)
		}
	}
	for _, w := range s.Windows {
		add(w, "", false, true)
	}
	for _, v := range s.Verdicts {
		for _, w := range v.Windows {
			add(w, v.Rule, v.Status == verdict.Fail, false)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].From < out[j].From })
	return out
}

// Status is the scenario's outcome: ERROR when the harness failed, NOT APPLICABLE when the target
// does not take it, FAIL when any verdict failed, PASS when every verdict passed, and INCONCLUSIVE
// otherwise: some verdict could not be shown, or the scenario has no verdict at all. A PASS must be
// earned by every expected verdict.
func (s *ScenarioReport) Status() verdict.Status {
	if s.Error != "" {
		return StatusError
	}
	if s.NotApplicable != "" {
		return verdict.NotApplicable
	}
	status := verdict.Pass
	for _, v := range s.Verdicts {
		switch v.Status {
		case verdict.Fail:
			return verdict.Fail
		case verdict.Pass:
		default:
			status = verdict.Inconclusive
		}
	}
	if len(s.Verdicts) == 0 {
		return verdict.Inconclusive
	}
	return status
}

// Duration is how long the scenario ran.
func (s *ScenarioReport) Duration() time.Duration {
	if s.Finished.Before(s.Started) {
		return 0
	}
	return s.Finished.Sub(s.Started)
}

// Counts tallies scenarios by outcome.
type Counts struct {
	Scenarios, Passed, Failed, Errored, Inconclusive, NotApplicable int
}

// Counts tallies the report's scenarios by outcome.
func (r *Report) Counts() Counts {
	c := Counts{Scenarios: len(r.Scenarios)}
	for i := range r.Scenarios {
		switch r.Scenarios[i].Status() {
		case verdict.Pass:
			c.Passed++
		case verdict.Fail:
			c.Failed++
		case StatusError:
			c.Errored++
		case verdict.NotApplicable:
			c.NotApplicable++
		default:
			c.Inconclusive++
		}
	}
	return c
}

// Exit codes, the same as the CLI's.
const (
	ExitPass         = 0
	ExitFail         = 1
	ExitError        = 2
	ExitInconclusive = 3
)

// ExitCode is the process exit code the run earns: 2 when any scenario errored (or none ran),
// 1 when any verdict failed, 3 when none failed but something could not be shown (or no scenario
// applied to the target: nothing was shown), 0 when every verdict of every scenario that applies
// passed. A NOT APPLICABLE scenario does not count otherwise.
func (r *Report) ExitCode() int {
	c := r.Counts()
	switch {
	case r.Interrupted != "": // stopped early, never a pass (the live run exited 128+signal)
		return ExitError
	case c.Errored > 0 || c.Scenarios == 0:
		return ExitError
	case c.Failed > 0:
		return ExitFail
	case c.Inconclusive > 0, c.NotApplicable == c.Scenarios:
		return ExitInconclusive
	}
	return ExitPass
}

// Validate checks what a reader relies on: a known schema version, named scenarios, known verdict
// statuses and data paths that stay inside the report directory.
func (r *Report) Validate() error {
	switch {
	case r.SchemaVersion == 0:
		return errors.New("no schemaVersion: not a probegate report")
	case r.SchemaVersion > SchemaVersion:
		return fmt.Errorf("schemaVersion %d is newer than this probegate understands (%d)", r.SchemaVersion, SchemaVersion)
	case len(r.Scenarios) == 0:
		return errors.New("the report lists no scenarios")
	}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if s.Name == "" {
			return fmt.Errorf("scenario %d has no name", i+1)
		}
		for _, p := range []string{s.TimelinePath, s.RequestsPath} {
			if p != "" && !filepath.IsLocal(filepath.FromSlash(p)) {
				return fmt.Errorf("scenario %q: path %q leaves the report directory", s.Name, p)
			}
		}
		for j, v := range s.Verdicts {
			if s.NotApplicable != "" && v.Status != verdict.NotApplicable {
				return fmt.Errorf("scenario %q is not applicable, yet verdict %d (%s) is %s: a scenario that did not run judges nothing", s.Name, j+1, v.Rule, v.Status)
			}
			if v.Measure != nil && !v.Measure.Valid() {
				return fmt.Errorf("scenario %q verdict %d (%s): measure direction %q is neither max nor min", s.Name, j+1, v.Rule, v.Measure.Direction)
			}
			switch v.Status {
			case verdict.Pass, verdict.Fail, verdict.Inconclusive:
			case verdict.NotApplicable:
				if s.NotApplicable == "" {
					return fmt.Errorf("scenario %q verdict %d (%s): NOT APPLICABLE, but the scenario says not why (notApplicable)", s.Name, j+1, v.Rule)
				}
			case skipV1:
				if r.SchemaVersion > 1 {
					return fmt.Errorf("scenario %q verdict %d (%s): status SKIP is gone since schemaVersion 2", s.Name, j+1, v.Rule)
				}
			default:
				return fmt.Errorf("scenario %q verdict %d (%s): unknown status %q", s.Name, j+1, v.Rule, v.Status)
			}
		}
	}
	return nil
}

// WriteJSON writes the report as indented JSON, stamping the current schema version.
func WriteJSON(w io.Writer, r *Report) error {
	r.SchemaVersion = SchemaVersion
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	return nil
}

// ReadJSON reads and validates a report written by WriteJSON. Unknown fields are an error, so a
// file from another tool is rejected rather than half-read.
func ReadJSON(rd io.Reader) (*Report, error) {
	dec := json.NewDecoder(rd)
	dec.DisallowUnknownFields()
	var r Report
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	r.upgrade()
	return &r, nil
}

// entries returns the scenario's timeline entries, or none when no timeline is attached.
func (s *ScenarioReport) entries() []timeline.Entry {
	if s.Timeline == nil {
		return nil
	}
	return s.Timeline.Entries()
}

// upgrade brings a validated report of an older schema to the current one: version 1's SKIP
// verdicts become INCONCLUSIVE, their Observed saying why.
func (r *Report) upgrade() {
	for i := range r.Scenarios {
		for j := range r.Scenarios[i].Verdicts {
			v := &r.Scenarios[i].Verdicts[j]
			if v.Status == skipV1 {
				v.Status = verdict.Inconclusive
				v.Unshown = append(v.Unshown, "skipped (schemaVersion 1 report): "+v.Observed)
			}
		}
	}
	r.SchemaVersion = SchemaVersion
}

// Capacity is a target's capacity on the scenario's own request, from a short step search before
// the load: the highest rate whose requests were nearly all sent on time and answered OK within a
// second.
type Capacity struct {
	// Rate is the highest rate held (requests per second). Saturated says a higher rate was missed by
	// the target; false: the search ended at the harness's own limit or its budget first, and the
	// capacity is only known to be at least Rate.
	Rate      float64 `json:"rate"`
	Saturated bool    `json:"saturated"`
	// HarnessLimit is the rate at which the harness itself fell behind its schedule (0: never).
	HarnessLimit float64 `json:"harnessLimit,omitempty"`
	// Steps are the search's steps, one line each.
	Steps []string `json:"steps,omitempty"`
	// Cap, when set, is the CPU cap the target ran under from a second search on: the first one
	// ended at the harness's own limit, so the target was brought within the harness's reach.
	Cap *CapacityCap `json:"cap,omitempty"`
}

// CapacityCap is how a target the harness could not out-send was capped, and what was known of
// it before.
type CapacityCap struct {
	// Millicores is each container's CPU cap (its cgroup's CFS quota on its node), Containers how
	// many containers carry it.
	Millicores int64 `json:"millicores"`
	Containers int   `json:"containers"`
	// CPUPerRequest is the CPU the target spent per request of the first search (milliseconds).
	CPUPerRequest float64 `json:"cpuPerRequestMs"`
	// Uncapped is the first search's result: the rate held and where the harness fell behind.
	Uncapped Capacity `json:"uncapped"`
}

// String is one line for logs, marks and the terminal.
func (c Capacity) String() string {
	s := fmt.Sprintf("capacity %g rps", c.Rate)
	switch {
	case c.Saturated:
		s += " (a higher rate was not served)"
	case c.HarnessLimit > 0:
		s += fmt.Sprintf(" at least: the harness fell behind at %g rps before the target did", c.HarnessLimit)
	default:
		s += " at least: not saturated within the search"
	}
	if c.Cap != nil {
		s += fmt.Sprintf(", with the target's CPU capped at %dm in each of its %d containers (uncapped: %s; %.3f CPU-ms per request)",
			c.Cap.Millicores, c.Cap.Containers, c.Cap.Uncapped.String(), c.Cap.CPUPerRequest)
	}
	return s
}

// Decided counts the verdicts of the scenarios that apply to the target and how many of them
// were decided (PASS or FAIL): an INCONCLUSIVE verdict, and a scenario that erred or judged
// nothing (counted as one verdict), are applicable and undecided. NOT APPLICABLE scenarios are
// left out of both.
func (r *Report) Decided() (decided, applicable int) {
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		switch {
		case s.NotApplicable != "":
			continue
		case s.Error != "" || len(s.Verdicts) == 0:
			applicable++
			continue
		}
		for _, v := range s.Verdicts {
			applicable++
			if v.Status == verdict.Pass || v.Status == verdict.Fail {
				decided++
			}
		}
	}
	return decided, applicable
}
