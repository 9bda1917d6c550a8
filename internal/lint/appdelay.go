package lint

import (
	"fmt"
	"strings"
	"time"
)

// appDelay is a withdrawal delay the application is told to keep, read from a flag or environment
// variable of its container: how long it keeps serving after SIGTERM before it stops accepting.
type appDelay struct {
	Setting string        // as the manifest writes it: "--shutdown-delay-duration=15s", "env SHUTDOWN_DELAY=5"
	Delay   time.Duration // 0 when the setting turns the delay off
}

// shutdownWords and delayWords classify a setting's name: it configures a withdrawal delay when it
// names the shutdown and a wait before it (--shutdown-delay-duration, SHUTDOWN_DELAY_SECONDS,
// --pre-stop-sleep), or a lame-duck period. A shutdown timeout (how long in-flight work may take once
// the listener is closed) names no wait and is not one.
var (
	shutdownWords = map[string]bool{"shutdown": true, "drain": true, "termination": true, "terminate": true, "stop": true, "exit": true}
	delayWords    = map[string]bool{"delay": true, "wait": true, "sleep": true}
)

// appShutdownDelay returns the first withdrawal delay container c's flags (in command and args, as
// --name=value or --name value) or plain environment variables set.
func appShutdownDelay(c ContainerRef) (appDelay, bool) {
	args := append(append([]string{}, c.Command...), c.Args...)
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		if d, ok := delaySetting(name, value); ok {
			setting := a
			if !hasValue {
				setting += " " + value
			}
			return appDelay{Setting: setting, Delay: d}, true
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			continue
		}
		if d, ok := delaySetting(e.Name, e.Value); ok {
			return appDelay{Setting: fmt.Sprintf("env %s=%s", e.Name, e.Value), Delay: d}, true
		}
	}
	return appDelay{}, false
}

// delaySetting reads value as a duration when name configures a withdrawal delay. A bare number is
// seconds, or milliseconds when the name ends in ms or millis.
func delaySetting(name, value string) (time.Duration, bool) {
	toks := nameTokens(name)
	if len(toks) == 0 {
		return 0, false
	}
	shutdown, delay := false, strings.Contains(strings.Join(toks, ""), "lameduck")
	for _, t := range toks {
		shutdown = shutdown || shutdownWords[t] || delay
		delay = delay || delayWords[t]
	}
	if !shutdown || !delay {
		return 0, false
	}
	value = strings.TrimSpace(value)
	if last := toks[len(toks)-1]; (last == "ms" || last == "millis") && isDigits(value) {
		value += "ms"
	}
	d, err := parseSeconds(value)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
