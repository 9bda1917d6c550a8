package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/probegate/probegate/internal/timeline"
)

// A report directory holds report.json, junit.xml and report.html at its top and, per scenario,
// the scenario's timeline.jsonl and requests.jsonl at the relative paths report.json names
// (by default scenarios/<name>[-<variant>]/).

// WriteAll saves a finished run into dir: each scenario's attached Timeline and Requests (at
// TimelinePath and RequestsPath, defaulting them), its Summary when the runner left it nil, then
// report.json, junit.xml and report.html. Every file is written to a temporary name and renamed,
// so a reader never sees half a file.
func WriteAll(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create report directory: %w", err)
	}
	used := map[string]bool{}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		var base string
		if s.TimelinePath != "" {
			// Chosen while the scenario ran (its timeline was streamed there): keep its directory.
			base = path.Dir(s.TimelinePath)
			used[path.Base(base)] = true
		} else {
			base = ScenarioDir(s, used)
		}
		if s.Timeline != nil {
			if s.TimelinePath == "" {
				s.TimelinePath = path.Join(base, TimelineFile)
			}
			if err := writeFile(dir, s.TimelinePath, s.Timeline.WriteJSONL); err != nil {
				return fmt.Errorf("scenario %q: %w", s.Name, err)
			}
		}
		if s.Requests != nil {
			if s.RequestsPath == "" {
				s.RequestsPath = path.Join(base, RequestsFile)
			}
			reqs := s.Requests
			if err := writeFile(dir, s.RequestsPath, func(w io.Writer) error { return timeline.WriteRequests(w, reqs) }); err != nil {
				return fmt.Errorf("scenario %q: %w", s.Name, err)
			}
		}
		if s.Attribution == nil && s.Requests != nil {
			a := timeline.AttributionOf(s.Requests)
			s.Attribution = &a
		}
		if s.Summary == nil && (s.Timeline != nil || s.Requests != nil) {
			sum := Summarise(s.entries(), s.Requests)
			s.Summary = &sum
		}
	}
	r.SchemaVersion = SchemaVersion
	if err := r.Validate(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := writeFile(dir, ReportFile, func(w io.Writer) error { return WriteJSON(w, r) }); err != nil {
		return err
	}
	return Render(dir, r)
}

// Render (re)writes junit.xml and report.html in dir from r and its attached data.
func Render(dir string, r *Report) error {
	if err := writeFile(dir, JUnitFile, func(w io.Writer) error { return WriteJUnit(w, r) }); err != nil {
		return err
	}
	return writeFile(dir, HTMLFile, func(w io.Writer) error { return WriteHTML(w, r) })
}

// LoadDir reads dir/report.json and attaches each scenario's timeline and requests from the
// paths it names. A missing directory, a missing or corrupt file, or a path leaving dir is an
// error naming what was wrong.
func LoadDir(dir string) (*Report, error) {
	info, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("report directory %s does not exist", dir)
		}
		return nil, fmt.Errorf("report directory: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	raw, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s has no %s: not a probegate report directory", dir, ReportFile)
		}
		return nil, fmt.Errorf("read %s: %w", ReportFile, err)
	}
	r, err := ReadJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ReportFile), err)
	}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if s.TimelinePath != "" {
			f, err := os.Open(filepath.Join(dir, filepath.FromSlash(s.TimelinePath)))
			if err != nil {
				return nil, fmt.Errorf("scenario %q timeline: %w", s.Name, err)
			}
			tl, err := timeline.Load(f)
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("scenario %q: %s: %w", s.Name, s.TimelinePath, err)
			}
			s.Timeline = tl
		}
		if s.RequestsPath != "" {
			f, err := os.Open(filepath.Join(dir, filepath.FromSlash(s.RequestsPath)))
			if err != nil {
				return nil, fmt.Errorf("scenario %q requests: %w", s.Name, err)
			}
			reqs, err := timeline.LoadRequests(f)
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("scenario %q: %s: %w", s.Name, s.RequestsPath, err)
			}
			s.Requests = reqs
		}
	}
	return r, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// ScenarioDir picks a unique (among used, which it updates), file-system-safe directory for a
// scenario's data inside the report directory: "scenarios/<name>[-<variant>]".
func ScenarioDir(s *ScenarioReport, used map[string]bool) string {
	name := s.Name
	if s.Variant != "" {
		name += "-" + s.Variant
	}
	name = strings.Trim(unsafeName.ReplaceAllString(name, "_"), "._")
	if name == "" {
		name = "scenario"
	}
	base, n := name, 1
	for used[base] {
		n++
		base = fmt.Sprintf("%s-%d", name, n)
	}
	used[base] = true
	return path.Join("scenarios", base)
}

// writeFile writes rel (a slash path inside dir) through a temporary file and a rename.
func writeFile(dir, rel string, write func(io.Writer) error) error {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("write %s: path leaves the report directory", rel)
	}
	full := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(full), ".tmp-"+filepath.Base(full)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", rel, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	if err := os.Rename(tmp.Name(), full); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return nil
}
