package lint

import (
	"fmt"
	"sort"
	"strings"
)

func init() {
	register(&Rule{
		ID:       "PG015",
		Name:     "invalid-timing-annotation",
		Severity: Error,
		Summary:  "a probegate annotation cannot be read (a timing that is no duration, an ignore naming no rule)",
		Explanation: "The probegate.dev/*-seconds annotations declare what the manifest cannot show: the " +
			"withdrawal delay, drain and cleanup times, propagation and application lags. lint and the " +
			"harness's timing oracle both read them; a value that is not a non-negative number of seconds " +
			"or a duration is ignored by lint and makes `probegate run` refuse the target.",
		Fix:         "Write seconds (\"5\", \"2.5\") or a Go duration (\"1500ms\", \"1m\").",
		ConfirmNote: "probegate run refuses the target (exit 2) when the timing oracle cannot read the annotation",
		Check:       checkAnnotations,
	})
}

// timingAnnotations are every duration annotation lint or the oracle reads.
var timingAnnotations = []string{
	AnnotationWithdrawal, AnnotationDrain, AnnotationCleanup, AnnotationPropagation, AnnotationReadinessLag, AnnotationColdStart,
	"probegate.dev/recovery-lag-seconds", "probegate.dev/liveness-lag-seconds",
}

func checkAnnotations(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG015")
	var out []Finding
	keys := append([]string{}, timingAnnotations...)
	sort.Strings(keys)
	for _, k := range keys {
		if _, _, err := declared(w, k); err != nil {
			f := r.finding(ctx, w, w.annotationPos(k), "", "%v", err)
			f.Fix = fmt.Sprintf("write %s as seconds (\"5\", \"2.5\") or a Go duration (\"1500ms\")", k)
			out = append(out, f)
		}
	}
	if bad := unknownIgnored(w); len(bad) > 0 {
		f := r.finding(ctx, w, w.annotationPos(AnnotationIgnore), "", "annotation %s names %s, which is no rule: nothing is silenced by it",
			AnnotationIgnore, strings.Join(bad, ", "))
		f.Fix = "name rules by ID or name (probegate lint --list-rules): \"PG007,no-withdrawal-delay: reason\""
		out = append(out, f)
	}
	return out
}
