package lint

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"
)

func init() {
	register(&Rule{
		ID:       "PG004",
		Name:     "startup-budget-below-cold-start",
		Severity: Error,
		Summary:  "the startup budget is shorter than a measured cold start",
		Explanation: "The kubelet kills a container whose startupProbe (or, without one, liveness) fails " +
			"failureThreshold times in a row: as early as initialDelaySeconds + (failureThreshold − 1) × " +
			"periodSeconds after start for a probe that fails fast (connection refused). When a measured cold " +
			"start takes longer, every cold start ends in a kill and a restart that is just as slow: the pod " +
			"never becomes ready, and a rollout or node drain stalls or takes capacity down with it. The cold " +
			"start comes from --cold-start, --report, or the workload's " + AnnotationColdStart + " annotation; " +
			"without any, a JVM container (a java image; JAVA_OPTS-style environment; java, -jar, -Xmx, -XX: or " +
			"-javaagent: in the command, the arguments or a variable's value) guarded only by liveness " +
			"is held to " + jvmColdStartText + ", a typical JVM start under a CPU limit (a warning).",
		Fix: "Raise the startupProbe's failureThreshold (keep periodSeconds short) until (failureThreshold − 1) × " +
			"periodSeconds covers the slowest measured cold start with margin; if there is no startupProbe, " +
			"add one rather than stretching liveness.",
		Scenario: "cold-start",
		Predicts: []string{"startup-not-killed"},
		// A liveness budget below a cold start is the guess of PG003 proven wrong: one finding.
		Restates: []string{"PG003"},
		Check:    checkStartupBudget,
	})
}

// jvmColdStart is the cold start assumed for a JVM container when none is measured or declared.
const (
	jvmColdStart     = 30 * time.Second
	jvmColdStartText = "30 s"
)

// jvmImage, jvmEnv and jvmFlag recognise a container that runs on a JVM: by its image, by the
// environment variables JVM launchers read, and by the launcher's own flags in the command,
// arguments or any variable's value.
var (
	jvmImage = regexp.MustCompile(`(?i)(openjdk|temurin|corretto|zulu|(^|[/_-])(jdk|jre|java)([:/_-]|$)|spring|tomcat|jetty|wildfly|keycloak|elasticsearch|opensearch|kafka|zookeeper|cassandra|solr|sonarqube|jenkins|liberty)`)
	jvmEnv   = map[string]bool{"JAVA_OPTS": true, "JAVA_TOOL_OPTIONS": true, "JVM_OPTS": true, "_JAVA_OPTIONS": true, "CATALINA_OPTS": true, "JDK_JAVA_OPTIONS": true}
	jvmFlag  = regexp.MustCompile(`^(-jar|-X(mx|ms|ss)[0-9].*|-XX:.+|-javaagent:.+)$`)
)

func isJVM(c ContainerRef) bool { return jvmWhy(c) != "" }

// jvmWhy says what marks c as a JVM container, or "" when nothing does: an environment variable a
// JVM launcher reads, a java binary or a launcher flag in the command or arguments (also inside a
// shell's script), launcher flags in another variable's value, or the image.
func jvmWhy(c ContainerRef) string {
	for _, e := range c.Env {
		if jvmEnv[e.Name] {
			return "env " + e.Name
		}
	}
	for _, part := range []struct {
		what  string
		words []string
	}{{"command", c.Command}, {"argument", c.Args}} {
		for _, w := range shellSplit.Split(strings.Join(part.words, " "), -1) {
			switch {
			case path.Base(w) == "java":
				return part.what + " java"
			case jvmFlag.MatchString(w):
				return part.what + " " + w
			}
		}
	}
	for _, e := range c.Env {
		for _, w := range strings.Fields(e.Value) {
			if jvmFlag.MatchString(w) {
				return "env " + e.Name
			}
		}
	}
	if jvmImage.MatchString(c.Image) {
		return "image " + strings.TrimSpace(c.Image)
	}
	return ""
}

func checkStartupBudget(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG004")
	cold, source := ctx.Config.ColdStart, ctx.Config.ColdStartSource
	if d, ok, err := declared(w, AnnotationColdStart); ok && err == nil {
		cold, source = d, "annotation "+AnnotationColdStart
	}
	var out []Finding
	for _, c := range w.Containers() {
		kind := Startup
		p := c.StartupProbe
		if p == nil {
			kind, p = Liveness, c.LivenessProbe
		}
		if p == nil {
			continue
		}
		cold, source, assumed := cold, source, false
		if cold <= 0 {
			if kind != Liveness || !isJVM(c) {
				continue
			}
			cold, source, assumed = jvmColdStart, "assumed for a JVM container ("+jvmWhy(c)+"); declare "+AnnotationColdStart+" with a measured one", true
		}
		t := timingOf(p)
		budget := t.KillAfter()
		if budget >= cold {
			continue
		}
		f := r.finding(ctx, w, w.AtContainer(c, kind.field()), c.Name,
			"container %q: %s probe kills as early as initialDelay + (F−1)·P = %s, before the %s cold start %s (%s) ends",
			c.Name, kind, fmtDur(budget), map[bool]string{false: "measured", true: "assumed"}[assumed], fmtDur(cold), source)
		f.Probe = string(kind)
		need := cold + cold/4 // 25 % margin
		if kind == Startup {
			f.Fix = fmt.Sprintf("set the startupProbe's failureThreshold ≥ %d at periodSeconds %d, so (F−1)·P = %s covers the %s cold start with 25%% margin",
				failureThresholdAbove(t.Period, need-t.InitialDelay), seconds32(t.Period), fmtDur(need), fmtDur(cold))
		} else {
			const period = 5 * time.Second
			f.Fix = fmt.Sprintf("add a startupProbe running liveness's check (%s) with periodSeconds %d and failureThreshold %d, so (F−1)·P = %s covers the %s cold start with 25%% margin; liveness then needs no initialDelaySeconds",
				describeHandler(p), seconds32(period), failureThresholdAbove(period, need), fmtDur(need), fmtDur(cold))
		}
		if assumed {
			f.Severity = Warning
		}
		out = append(out, f)
	}
	return out
}
