package lint

import (
	"path"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// shells are the interpreters an exec command may need.
var shells = map[string]bool{"sh": true, "bash": true, "ash": true, "dash": true, "zsh": true, "ksh": true, "busybox": true}

// execShell returns the shell an exec command runs through ("sh" for ["/bin/sh", "-c", …] or
// ["env", "bash", …]), or "".
func execShell(cmd []string) string {
	if len(cmd) == 0 {
		return ""
	}
	bin := path.Base(cmd[0])
	if bin == "env" && len(cmd) > 1 {
		bin = path.Base(cmd[1])
	}
	if shells[bin] {
		return bin
	}
	return ""
}

var sleepCall = regexp.MustCompile(`(?:^|[\s;&|(])sleep\s+([0-9.]+[smh]?)`)

// preStopDelay returns how long container c's preStop hook holds SIGTERM back: the native sleep
// action, an exec of sleep, or the sleeps of a shell script. known is false for hooks whose duration
// cannot be read (httpGet, other commands).
func preStopDelay(c ContainerRef) (d time.Duration, has, known bool) {
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
		return 0, false, true
	}
	h := c.Lifecycle.PreStop
	switch {
	case h.Sleep != nil:
		return time.Duration(h.Sleep.Seconds) * time.Second, true, true
	case h.Exec != nil:
		cmd := h.Exec.Command
		if len(cmd) >= 2 && path.Base(cmd[0]) == "sleep" {
			d, ok := parseSleepArg(cmd[1])
			return d, true, ok
		}
		if execShell(cmd) != "" {
			script := strings.Join(cmd[1:], " ")
			var total time.Duration
			found := false
			for _, m := range sleepCall.FindAllStringSubmatch(script, -1) {
				if d, ok := parseSleepArg(m[1]); ok {
					total += d
					found = true
				}
			}
			return total, true, found
		}
	}
	return 0, true, false
}

// parseSleepArg reads sleep(1)'s argument: seconds with an optional s, m or h suffix.
func parseSleepArg(s string) (time.Duration, bool) {
	unit := time.Second
	switch {
	case strings.HasSuffix(s, "s"):
		s = strings.TrimSuffix(s, "s")
	case strings.HasSuffix(s, "m"):
		s, unit = strings.TrimSuffix(s, "m"), time.Minute
	case strings.HasSuffix(s, "h"):
		s, unit = strings.TrimSuffix(s, "h"), time.Hour
	}
	d, err := parseSeconds(s)
	if err != nil {
		return 0, false
	}
	return time.Duration(float64(d) * float64(unit) / float64(time.Second)), true
}

// gracePeriod is the pod's terminationGracePeriodSeconds, defaulted to 30 s as the API server does.
func gracePeriod(spec *corev1.PodSpec) time.Duration {
	if spec.TerminationGracePeriodSeconds == nil {
		return 30 * time.Second
	}
	return time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
}
