package runner

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/probegate/probegate/reports"
)

// streamTimeline, when the runner writes a report directory, streams the entries of rep's
// timeline to their file in it as they are appended, so a run cut short (or someone watching)
// finds what happened so far, and sets rep.TimelinePath. stop ends the stream; the report writer
// later replaces the file with the whole, sorted timeline.
func (r *Runner) streamTimeline(rep *reports.ScenarioReport) (stop func(), err error) {
	if r.reportDir == "" || rep.Timeline == nil {
		return func() {}, nil
	}
	r.dirMu.Lock()
	if r.dirs == nil {
		r.dirs = map[string]bool{}
	}
	rel := path.Join(reports.ScenarioDir(rep, r.dirs), reports.TimelineFile)
	r.dirMu.Unlock()
	full := filepath.Join(r.reportDir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return nil, fmt.Errorf("stream timeline: %w", err)
	}
	f, err := os.Create(full)
	if err != nil {
		return nil, fmt.Errorf("stream timeline: %w", err)
	}
	rep.TimelinePath = rel
	tl := rep.Timeline
	tl.StreamTo(f)
	return func() {
		tl.StreamTo(io.Discard)
		if err := tl.Err(); err != nil {
			r.logger().Warn("stream timeline", "file", full, "err", err)
		}
		f.Close()
	}, nil
}
