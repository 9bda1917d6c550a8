package lint

import (
	"fmt"
	"regexp"
)

func init() {
	register(&Rule{
		ID:       "PG010",
		Name:     "exec-needs-shell",
		Severity: Warning,
		Summary:  "a preStop hook or probe execs a shell or tool the image may not have",
		Explanation: "An exec hook or probe runs inside the container's image. Minimal images (FROM scratch, " +
			"distroless) have no /bin/sh and no sleep binary. A preStop hook that cannot start fails with " +
			"FailedPreStopHook and the kubelet sends SIGTERM at once, so the withdrawal delay silently " +
			"disappears; an exec probe that cannot start fails every time, so liveness restarts a healthy " +
			"container forever.",
		Fix: "Use the native lifecycle `sleep` action for preStop delays, httpGet/tcpSocket/grpc handlers for " +
			"probes, or make sure the image ships the shell (and tools) the command needs.",
		Scenario: "pod-delete-under-load",
		Check:    checkExecShell,
	})
}

// minimalImage matches image references that look like they carry no shell.
var minimalImage = regexp.MustCompile(`(?i)(distroless|(^|[/:_-])scratch([/:_-]|$)|(^|[/:_-])static([/:_-]|$))`)

func checkExecShell(ctx *Context, w *Workload) []Finding {
	r, _ := RuleByID("PG010")
	var out []Finding
	for _, c := range w.Containers() {
		minimal := minimalImage.MatchString(c.Image)
		check := func(what string, cmd []string, path ...any) {
			if len(cmd) == 0 {
				return
			}
			var msg string
			switch sh := execShell(cmd); {
			case sh != "":
				msg = fmt.Sprintf("%s runs through %s (%q)", what, sh, cmd[0])
			case minimal:
				msg = fmt.Sprintf("%s execs %q", what, cmd[0])
			default:
				return
			}
			image := "may not have it"
			if minimal {
				image = "looks minimal (distroless/scratch) and has none"
			}
			f := r.finding(ctx, w, w.AtContainer(c, path...), c.Name, "container %q: %s; image %q %s", c.Name, msg, c.Image, image)
			if minimal {
				f.Severity = Error
			}
			out = append(out, f)
		}
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Exec != nil {
			check("preStop hook", c.Lifecycle.PreStop.Exec.Command, "lifecycle", "preStop")
		}
		for _, kind := range []ProbeKind{Liveness, Readiness, Startup} {
			if p := probeOf(c, kind); p != nil && p.Exec != nil {
				check(string(kind)+" probe", p.Exec.Command, kind.field())
			}
		}
	}
	return out
}
