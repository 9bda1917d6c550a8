package compare

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/probegate/probegate/reports"
)

// Run is one report read for a comparison.
type Run struct {
	// Path is the report.json that was read.
	Path   string
	Report *reports.Report
}

// InputError is a report that cannot be compared: unreadable, not a probegate report, or of a
// schema newer than this probegate understands. Its message is one line naming the file.
type InputError struct {
	Path string
	Err  error
}

func (e *InputError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }
func (e *InputError) Unwrap() error { return e.Err }

// Load reads a run: a report.json file, or a run directory holding one. Only report.json is read
// (a comparison needs no timeline), so a directory whose data files were pruned still compares.
func Load(path string) (Run, error) {
	file := path
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		file = filepath.Join(path, reports.ReportFile)
	}
	f, err := os.Open(file)
	if err != nil {
		return Run{}, &InputError{Path: file, Err: unwrapPath(err)}
	}
	defer f.Close()
	rep, err := reports.ReadJSON(f)
	if err != nil {
		return Run{}, &InputError{Path: file, Err: err}
	}
	return Run{Path: file, Report: rep}, nil
}

// LoadAll reads every path in order, stopping at the first that cannot be read.
func LoadAll(paths []string) ([]Run, error) {
	runs := make([]Run, 0, len(paths))
	for _, p := range paths {
		r, err := Load(p)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// unwrapPath drops the path an *os.PathError repeats ("open x: no such file" → "no such file").
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
