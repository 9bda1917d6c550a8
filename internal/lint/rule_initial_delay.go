package lint

import (
	"fmt"
	"path"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func init() {
	register(&Rule{
		ID:       "PG003",
		Name:     "initial-delay-instead-of-startup-probe",
		Severity: Warning,
		Summary:  "no startupProbe; a large liveness initialDelaySeconds guesses the bootstrap time",
		Explanation: "initialDelaySeconds is a fixed guess: a fast start waits for nothing before liveness " +
			"protects it, and a start slower than the guess (cold caches, a busy node, a slow dependency at " +
			"boot) is killed by liveness and restarted into the same slow start, a crash loop. A startupProbe " +
			"gives bootstrap its own budget of failureThreshold × periodSeconds and hands over to liveness " +
			"the moment startup succeeds. A delay up to --max-initial-delay (5 s) is grace, not a budget. " +
			"The finding is a warning when the manifest shows the guess is at risk: liveness runs readiness's " +
			"own check (it fails for the whole bootstrap, dependency waits included), the container keeps " +
			"state on a volume that every start loads (a PersistentVolumeClaim, or a hostPath mounted " +
			"writable at a data directory: a path with a `data` segment or under /var/lib), or the budget " +
			"initialDelay + (F−1)·P is under " + tightBootstrapBudgetText + ". State on an emptyDir at a data directory " +
			"counts only when liveness runs readiness's check: the emptyDir is created empty with each pod, so " +
			"a rollout's or a reschedule's new pod loads nothing and only a restart in place does, and a " +
			"liveness check of its own is the one lint reads as passing once the process is up. A check both " +
			"probes run counts as readiness's unless its name says liveness (`/livez`, `redis_liveness.sh`): " +
			"then readiness borrows liveness's check. When liveness runs readiness's check on a " +
			"container a Service routes to, that is PG001's root cause: PG001's finding states the bootstrap budget " +
			"and this one is info (give liveness its own check and the delay reads as grace). Otherwise (a separate liveness " +
			"check, nothing to load, a budget of " + tightBootstrapBudgetText + " or more) the delay reads as grace " +
			"before liveness starts and the finding is info: a startupProbe would only end the wait sooner. " +
			"What the manifest cannot show is whether the check liveness runs passes while a start loads its " +
			"state or waits for readiness's conditions (some answer as soon as the process listens, others " +
			"only once the load is done); lint assumes it does not, so these cases stay warnings. A measured " +
			"cold start settles them: with " + AnnotationColdStart + " (or --cold-start, --report) the finding " +
			"is info when the budget covers it with 25 % margin, and PG004 reports (instead of this rule) a " +
			"budget below it.",
		Fix: "Add a startupProbe on a startup endpoint with failureThreshold × periodSeconds above the measured " +
			"cold start (with margin), and drop liveness initialDelaySeconds to 0 or a few seconds.",
		Scenario: "cold-start",
		Predicts: []string{"startup-not-killed"},
		Check:    checkInitialDelay,
	})
}

// tightBootstrapBudget is the liveness budget below which a guessed delay is at risk whatever the
// container does at start: one slow dependency, an image pull on a busy node or a CPU-throttled start
// overruns it.
const (
	tightBootstrapBudget     = 30 * time.Second
	tightBootstrapBudgetText = "30 s"
)

func checkInitialDelay(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG003")
	var out []Finding
	for _, c := range w.Containers() {
		if c.StartupProbe != nil || c.LivenessProbe == nil {
			continue
		}
		t := timingOf(c.LivenessProbe)
		if t.InitialDelay <= ctx.Config.MaxInitialDelay {
			continue
		}
		f := r.finding(ctx, w, w.AtContainer(c, Liveness.field(), "initialDelaySeconds"), c.Name,
			"container %q: no startupProbe, liveness initialDelaySeconds is %s (limit %s): a start slower than initialDelay + (F−1)·P = %s is killed by liveness",
			c.Name, fmtDur(t.InitialDelay), fmtDur(ctx.Config.MaxInitialDelay), fmtDur(t.KillAfter()))
		f.Probe = string(Liveness)
		if cold, source := measuredColdStart(ctx, w); cold > 0 && t.KillAfter() >= cold+cold/4 {
			f.Severity = Info
			f.Message += fmt.Sprintf("; it covers the measured cold start %s (%s) with 25%% margin, so the delay is a measured budget, not a guess", fmtDur(cold), source)
		} else if risk := bootstrapRisk(w, c, t); risk != "" {
			f.Message += ": " + risk
		} else if livenessRunsReadinessCheck(c) {
			const shared = "liveness runs readiness's check, so it fails until the app is ready and every bootstrap step must fit"
			if identicalProbesReported(ctx, w, c) {
				f.Severity = Info
				f.Message += "; " + shared + ", which is PG001's root cause on this container: once liveness has its own check the delay reads as grace"
			} else {
				f.Message += ": " + shared
			}
		} else {
			f.Severity = Info
			own := "liveness is a check of its own"
			if handlersEqual(c.LivenessProbe, c.ReadinessProbe) {
				own = "readiness borrows liveness's check, named for liveness"
			}
			f.Message += fmt.Sprintf("; %s, %s and the budget is at least %s, so the delay reads as grace", own, stateNote(w, c), tightBootstrapBudgetText)
		}
		const period = 5
		f.Fix = fmt.Sprintf("add a startupProbe running liveness's check (%s) with periodSeconds %d and failureThreshold %d (the same %s budget, ended the moment the app is up), and drop liveness initialDelaySeconds to 0",
			describeHandler(c.LivenessProbe), period, failureThresholdAbove(period*time.Second, t.KillAfter()), fmtDur(t.KillAfter()))
		out = append(out, f)
	}
	return out
}

// livenessRunsReadinessCheck reports whether container c's liveness runs readiness's check, which
// fails until the app is ready: the same check, unless its name says it is liveness's own that
// readiness borrows (argo-cd's sentinel runs sentinel_liveness.sh for both).
func livenessRunsReadinessCheck(c ContainerRef) bool {
	return c.ReadinessProbe != nil && handlersEqual(c.LivenessProbe, c.ReadinessProbe) && !namedForLiveness(c.LivenessProbe)
}

// stateNote describes the state container c's start loads, when that is no risk: none, or an
// emptyDir only a restart in place finds filled.
func stateNote(w *Workload, c ContainerRef) string {
	if m, _, ok := stateMount(w, c); ok {
		return fmt.Sprintf("its only state is on emptyDir %q at %s (created empty with every pod: only a restart in place loads it)", m.Name, m.MountPath)
	}
	return "the container loads no state"
}

// measuredColdStart is the cold start known for w: its probegate.dev/cold-start-seconds annotation,
// else --cold-start or --report; 0 when none is.
func measuredColdStart(ctx *Context, w *Workload) (time.Duration, string) {
	if d, ok, err := declared(w, AnnotationColdStart); ok && err == nil {
		return d, "annotation " + AnnotationColdStart
	}
	return ctx.Config.ColdStart, ctx.Config.ColdStartSource
}

// bootstrapRisk says what in the manifest puts container c's guessed bootstrap budget at risk, or ""
// when nothing does. Liveness running readiness's check is a risk here only together with state on
// an emptyDir; on its own the caller weighs it, because PG001 may already report it as its root cause.
func bootstrapRisk(w *Workload, c ContainerRef, t Timing) string {
	if c.ReadinessProbe == nil {
		return "no readiness probe tells bootstrap from a hang, so liveness alone bounds the start"
	}
	m, persistent, ok := stateMount(w, c)
	switch {
	case ok && persistent:
		return fmt.Sprintf("the container keeps state on volume %q at %s, and a start that loads it grows with the data", m.Name, m.MountPath)
	case ok && livenessRunsReadinessCheck(c):
		return fmt.Sprintf("the container keeps state on emptyDir %q at %s, which a restart in place loads, and liveness runs readiness's check, which fails until the load is done", m.Name, m.MountPath)
	case t.KillAfter() < tightBootstrapBudget:
		return fmt.Sprintf("a budget under %s leaves no room for a slow dependency or a throttled start", tightBootstrapBudgetText)
	}
	return ""
}

// stateMount returns the mount of container c that holds state a start may load, preferring one
// that outlives the pod: any PersistentVolumeClaim (a pod volume, a generic ephemeral volume or a
// StatefulSet's claim template), or an emptyDir or hostPath mounted writable at a data directory (a
// path with a "data" segment, or under /var/lib). Scratch, runtime and configuration mounts (/tmp,
// /run, plugin and cache directories, ConfigMaps, Secrets) do not count. persistent is false for an
// emptyDir: it is created empty with each pod, so only a restart of the container in place finds
// data in it, never a rollout's or a reschedule's new pod.
func stateMount(w *Workload, c ContainerRef) (m corev1.VolumeMount, persistent, ok bool) {
	volumes := map[string]*corev1.Volume{}
	for i := range w.Pod.Volumes {
		volumes[w.Pod.Volumes[i].Name] = &w.Pod.Volumes[i]
	}
	for _, vm := range c.VolumeMounts {
		if vm.ReadOnly {
			continue
		}
		v := volumes[vm.Name]
		switch {
		case v == nil:
			if w.Kind == "StatefulSet" {
				return vm, true, true // a volumeClaimTemplate
			}
		case v.PersistentVolumeClaim != nil || v.Ephemeral != nil:
			return vm, true, true
		case v.HostPath != nil && dataPath(vm.MountPath):
			return vm, true, true
		case v.EmptyDir != nil && dataPath(vm.MountPath) && !ok:
			m, ok = vm, true
		}
	}
	return m, false, ok
}

// dataPath reports whether p is a conventional data directory: a "data" path segment (/data,
// /data/db, /usr/share/app/data) or a directory under /var/lib.
func dataPath(p string) bool {
	p = path.Clean("/" + p)
	if strings.HasPrefix(p, "/var/lib/") {
		return true
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "data" {
			return true
		}
	}
	return false
}
