package lint

import (
	"fmt"
	"regexp"
)

func init() {
	register(&Rule{
		ID:       "PG010",
		Name:     "exec-needs-shell",
		Severity: Error,
		Summary:  "a preStop hook or probe execs a shell or tool a minimal image does not have",
		Explanation: "An exec hook or probe runs inside the container's image. Minimal images (FROM scratch, " +
			"distroless) have no /bin/sh and no sleep binary. A preStop hook that cannot start fails with " +
			"FailedPreStopHook and the kubelet sends SIGTERM at once, so the withdrawal delay silently " +
			"disappears; an exec probe that cannot start fails every time, so liveness restarts a healthy " +
			"container forever. Only images that look minimal are flagged: most images ship a shell.",
		Fix: "Use the native lifecycle `sleep` action for preStop delays, httpGet/tcpSocket/grpc handlers for " +
			"probes, or make sure the image ships the shell (and tools) the command needs.",
		Scenario: "pod-delete-under-load",
		Predicts: []string{"failed-requests-budget", "terminating-before-exit"},
		Check:    checkExecShell,
	})
}

// minimalImage matches image references that look like they carry no shell; debugImage the
// variants of those that add one (distroless ":debug" tags ship busybox).
var (
	minimalImage = regexp.MustCompile(`(?i)(distroless|(^|[/:_-])scratch([/:_-]|$)|(^|[/:_-])static([/:_-]|$))`)
	debugImage   = regexp.MustCompile(`(?i)[:_-]debug`)
)

func checkExecShell(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG010")
	var out []Finding
	for _, c := range w.Containers() {
		if !minimalImage.MatchString(c.Image) || debugImage.MatchString(c.Image) {
			continue // most images ship a shell; only a minimal one is known to lack it
		}
		check := func(what, probe string, cmd []string, path ...any) {
			if len(cmd) == 0 {
				return
			}
			msg := fmt.Sprintf("%s execs %q", what, cmd[0])
			if sh := execShell(cmd); sh != "" {
				msg = fmt.Sprintf("%s runs through %s (%q)", what, sh, cmd[0])
			}
			f := r.finding(ctx, w, w.AtContainer(c, path...), c.Name, "container %q: %s; image %q looks minimal (distroless/scratch) and has none", c.Name, msg, c.Image)
			f.Probe = probe
			if probe == "" {
				f.Fix = fmt.Sprintf("replace the exec preStop hook with lifecycle: {preStop: {sleep: {seconds: N}}}, which needs nothing in %q", c.Image)
			} else {
				f.Fix = fmt.Sprintf("replace the exec %s probe with httpGet, tcpSocket or grpc against the container's port, which needs nothing in %q", probe, c.Image)
			}
			out = append(out, f)
		}
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Exec != nil {
			n := len(out)
			check("preStop hook", "", c.Lifecycle.PreStop.Exec.Command, "lifecycle", "preStop")
			if d, _, known := preStopDelay(c); known && d > 0 && len(out) > n {
				out[n].Fix = fmt.Sprintf("replace the exec preStop hook with lifecycle: {preStop: {sleep: {seconds: %d}}}, which needs nothing in %q", seconds32(d), c.Image)
			}
		}
		for _, kind := range []ProbeKind{Liveness, Readiness, Startup} {
			if p := probeOf(c, kind); p != nil && p.Exec != nil {
				check(string(kind)+" probe", string(kind), p.Exec.Command, kind.field())
			}
		}
	}
	return out
}
