package lint

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/oracle"
)

// Annotations a target declares on its workload or pod template (the pod template's win). The
// timing ones are the timing oracle's (internal/oracle), so lint and the harness read one vocabulary.
// Durations are seconds ("20", "2.5") or Go durations ("1500ms").
const (
	// AnnotationDependencyCheckPaths lists HTTP paths that check shared dependencies, comma-separated:
	// "/health/deep,/healthz/db".
	AnnotationDependencyCheckPaths = "probegate.dev/dependency-check-paths"
	// AnnotationWithdrawal is the routing withdrawal delay: how long the application keeps serving
	// after SIGTERM (readiness already failing) before it stops accepting. A preStop sleep counts
	// as withdrawal when the annotation is absent.
	AnnotationWithdrawal = oracle.AnnotationWithdrawal
	// AnnotationDrain is the longest admitted work the application finishes after it stops accepting.
	AnnotationDrain = oracle.AnnotationDrain
	// AnnotationCleanup is the time spent closing pools and flushing telemetry after the drain.
	AnnotationCleanup = oracle.AnnotationCleanup
	// AnnotationPropagation overrides the kubelet → EndpointSlice → kube-proxy allowance.
	AnnotationPropagation = oracle.AnnotationPropagation
	// AnnotationReadinessLag is how long the application takes to turn a fault into a failing
	// readiness endpoint (check interval × hysteresis + budget), on top of the probe's own window.
	AnnotationReadinessLag = oracle.AnnotationReadinessLag
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

// declared reads a duration annotation; ok is false when w does not declare it.
func declared(w *Workload, key string) (d time.Duration, ok bool, err error) {
	v, ok := w.Annotations[key]
	if !ok {
		return 0, false, nil
	}
	d, err = parseSeconds(v)
	if err != nil {
		return 0, true, fmt.Errorf("annotation %s=%q: %w", key, v, err)
	}
	return d, true, nil
}

// parseSeconds reads "20", "2.5" (seconds) or a Go duration ("20s", "1m").
// The parsing is oracle.ParseSeconds'; lint says in its own words what a bad value should be.
func parseSeconds(v string) (time.Duration, error) {
	d, err := oracle.ParseSeconds(v)
	if err != nil && !errors.Is(err, oracle.ErrNegativeDuration) {
		return 0, errors.New("not a number of seconds or a duration")
	}
	return d, err
}

// AnnotationIgnore silences rules for one workload: "PG007,PG009" or "PG007,no-withdrawal-delay:
// reason". The findings are still counted as suppressed.
const AnnotationIgnore = "probegate.dev/ignore"

// AnnotationColdStart declares a workload's measured (or known) cold start, checked like --cold-start
// but for this workload only.
const AnnotationColdStart = "probegate.dev/cold-start-seconds"

// ignoredRules reads w's probegate.dev/ignore annotation into suppressions by rule ID. Names that are
// no rule are left out (PG015 reports them).
func ignoredRules(w *Workload) map[string]Suppression {
	v, ok := w.Annotations[AnnotationIgnore]
	if !ok {
		return nil
	}
	ids, reason, _ := strings.Cut(v, ":")
	out := map[string]Suppression{}
	for _, s := range strings.Split(ids, ",") {
		if id, ok := ruleID(s); ok {
			out[id] = Suppression{Kind: "annotation", Reason: strings.TrimSpace(reason)}
		}
	}
	return out
}

// unknownIgnored lists the names in w's ignore annotation that are no rule.
func unknownIgnored(w *Workload) []string {
	v, ok := w.Annotations[AnnotationIgnore]
	if !ok {
		return nil
	}
	ids, _, _ := strings.Cut(v, ":")
	var out []string
	for _, s := range strings.Split(ids, ",") {
		if s = strings.TrimSpace(s); s != "" {
			if _, ok := ruleID(s); !ok {
				out = append(out, s)
			}
		}
	}
	return out
}
