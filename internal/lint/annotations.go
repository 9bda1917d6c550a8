package lint

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Annotations a target declares on its workload or pod template for lint (and the harness) to read.
const (
	// AnnotationDependencyCheckPaths lists HTTP paths that check shared dependencies, comma-separated:
	// "/health/deep,/healthz/db".
	AnnotationDependencyCheckPaths = "probegate.dev/dependency-check-paths"
	// AnnotationDrainSeconds is the time the application spends withdrawing and draining after
	// SIGTERM, in seconds ("20") or as a duration ("20s").
	AnnotationDrainSeconds = "probegate.dev/drain-seconds"
)

// dependencyMatch says how lint knows a path checks dependencies.
type dependencyMatch int

const (
	notDependency dependencyMatch = iota
	guessedDependency
	declaredDependency
)

// looksLikeDependencyCheck matches paths whose names suggest a deep check (/health/deep, /healthz/db,
// /dependencies, /database …) when the target declares none.
var looksLikeDependencyCheck = regexp.MustCompile(`(?i)(deep|/dbs?(/|$)|database|depend|downstream|upstream)`)

// dependencyCheck reports whether path is a dependency check of workload w: declared by annotation,
// or, when w declares none, guessed from the path's name.
func dependencyCheck(w *Workload, path string) dependencyMatch {
	if path == "" {
		return notDependency
	}
	if v, ok := w.Annotations[AnnotationDependencyCheckPaths]; ok {
		for _, p := range strings.Split(v, ",") {
			if strings.TrimSpace(p) == path {
				return declaredDependency
			}
		}
		return notDependency
	}
	if looksLikeDependencyCheck.MatchString(path) {
		return guessedDependency
	}
	return notDependency
}

// dependencyNote explains how the match was made, for messages.
func (m dependencyMatch) note() string {
	if m == guessedDependency {
		return "looks like a dependency check by its name (declare it with annotation " + AnnotationDependencyCheckPaths + ")"
	}
	return "is declared a dependency check (" + AnnotationDependencyCheckPaths + ")"
}

// drainTime reads the declared drain time; ok is false when w declares none.
func drainTime(w *Workload) (d time.Duration, ok bool, err error) {
	v, ok := w.Annotations[AnnotationDrainSeconds]
	if !ok {
		return 0, false, nil
	}
	d, err = parseSeconds(v)
	if err != nil {
		return 0, true, fmt.Errorf("annotation %s=%q: %w", AnnotationDrainSeconds, v, err)
	}
	return d, true, nil
}

// parseSeconds reads "20", "2.5" (seconds) or a Go duration ("20s", "1m").
func parseSeconds(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 {
			return 0, fmt.Errorf("negative duration")
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("not a number of seconds or a duration")
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration")
	}
	return d, nil
}
