package tune

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/reports"
)

// Run is one report directory, loaded.
type Run struct {
	Dir    string
	Report *reports.Report
}

// LoadRuns reads each report directory (report.json and the files it names). A report.json path
// stands for its directory.
func LoadRuns(dirs []string) ([]Run, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no report directory given")
	}
	var out []Run
	for _, dir := range dirs {
		if filepath.Base(dir) == reports.ReportFile {
			dir = filepath.Dir(dir)
		}
		rep, err := reports.LoadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("load run: %w", err)
		}
		if len(rep.Scenarios) == 0 {
			return nil, fmt.Errorf("load run: %s holds no scenario", dir)
		}
		out = append(out, Run{Dir: dir, Report: rep})
	}
	return out, nil
}

// scenarioRun is one scenario's recorded data with the settings it ran with.
type scenarioRun struct {
	run, label string
	target     string
	entries    []timeline.Entry
	requests   []timeline.Request
	loadStart  time.Duration
	loadEnd    time.Duration
	hasLoad    bool
	settings   settings
}

func (s *scenarioRun) evidence(pod string, from, to time.Duration, seq int64, note string, args ...any) Evidence {
	return Evidence{Run: s.run, Scenario: s.label, Pod: pod, From: from, To: to, Seq: seq, Value: to - from,
		Note: fmt.Sprintf(note, args...)}
}

// loadWindow reports whether t lies while the load ran.
func (s *scenarioRun) underLoad(t time.Duration) bool {
	return s.hasLoad && t >= s.loadStart && t <= s.loadEnd
}

// settings are a workload's current probe and shutdown settings.
type settings struct {
	Kind, Name, Container string
	Source                string
	Oracle                oracle.Oracle
	// Startup is the startup probe's timing; nil when there is none or (startupKnown false) when
	// the report does not say.
	Startup      *oracle.ProbeTiming
	startupKnown bool
	// container is the recorded container (probes, lifecycle); nil for a report without a
	// recorded spec.
	container *corev1.Container
	grace     *int64
}

const (
	sourceRecorded = "recorded spec (timeline workload entry)"
	sourceOracle   = "report.json oracle (this run predates the recorded spec: startup period, preStop hooks and probe handlers are not known)"
)

// scenarioRuns reads every scenario of runs that can give evidence; the others are named in
// skipped.
func scenarioRuns(runs []Run) (out []*scenarioRun, skipped []string) {
	for _, r := range runs {
		for i := range r.Report.Scenarios {
			s := &r.Report.Scenarios[i]
			label := s.Name
			if s.Variant != "" {
				label += "/" + s.Variant
			}
			if s.Timeline == nil {
				skipped = append(skipped, fmt.Sprintf("%s: %s: no timeline recorded", r.Dir, label))
				continue
			}
			sr := &scenarioRun{run: r.Dir, label: label, target: s.Target, entries: s.Timeline.Entries(), requests: s.Requests}
			for _, e := range sr.entries {
				if e.Kind == timeline.KindMark && e.Mark != nil {
					switch e.Mark.Name {
					case "load-start":
						sr.loadStart = e.T
					case "load-end":
						sr.loadEnd, sr.hasLoad = e.T, true
					}
				}
			}
			st, err := currentSettings(s, sr.entries)
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("%s: %s: %v", r.Dir, label, err))
				continue
			}
			sr.settings = st
			out = append(out, sr)
		}
	}
	return out, skipped
}

// currentSettings reads the settings a scenario ran with: from the timeline's workload entry when
// the run recorded one, else from the oracle in report.json and the Deployment named by the
// timeline's rollout entries.
func currentSettings(s *reports.ScenarioReport, entries []timeline.Entry) (settings, error) {
	for _, e := range entries {
		if e.Kind == timeline.KindWorkload && e.Workload != nil {
			return recordedSettings(e.Workload)
		}
	}
	if s.Oracle == nil {
		return settings{}, fmt.Errorf("no recorded spec and no oracle in report.json (the scenario did not reach its verdicts)")
	}
	st := settings{Kind: "Deployment", Container: s.Oracle.Container, Source: sourceOracle, Oracle: *s.Oracle}
	for _, e := range entries {
		if e.Kind == timeline.KindRollout && e.Rollout != nil {
			st.Name = e.Rollout.Deployment
			break
		}
	}
	if st.Name == "" {
		return settings{}, fmt.Errorf("no recorded spec and no Deployment on the timeline: the workload is unknown")
	}
	st.startupKnown = s.Oracle.Startup.Source != "startupProbe"
	return st, nil
}

func recordedSettings(w *timeline.WorkloadSpec) (settings, error) {
	var spec corev1.PodSpec
	if err := json.Unmarshal(w.PodSpec, &spec); err != nil {
		return settings{}, fmt.Errorf("recorded spec of %s/%s: %w", w.Kind, w.Name, err)
	}
	o, err := oracle.Compute(spec, w.Annotations, oracle.Options{Container: w.Container})
	if err != nil {
		return settings{}, fmt.Errorf("recorded spec of %s/%s: %w", w.Kind, w.Name, err)
	}
	st := settings{Kind: w.Kind, Name: w.Name, Container: w.Container, Source: sourceRecorded, Oracle: o,
		startupKnown: true, grace: spec.TerminationGracePeriodSeconds}
	for i := range spec.Containers {
		if spec.Containers[i].Name == o.Container {
			c := spec.Containers[i]
			st.container = &c
			st.Startup = oracle.NewProbeTiming(oracle.Startup, c.StartupProbe)
		}
	}
	return st, nil
}

// key groups scenario runs of the same workload with the same settings.
func (st settings) key(target string) string {
	raw, _ := json.Marshal(struct {
		T, K, N, C string
		O          oracle.Oracle
		S          *oracle.ProbeTiming
	}{target, st.Kind, st.Name, st.Container, st.Oracle, st.Startup})
	return string(raw)
}
