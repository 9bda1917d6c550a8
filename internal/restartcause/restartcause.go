// Package restartcause decides why a container instance ended, from the evidence on a timeline:
// the pod status facts carried by the restart entry itself (lastState.terminated reason, exit code,
// finishedAt), kubelet events (Killing "failed liveness probe", Unhealthy, Evicted), pod transitions
// ("deleting", an Evicted phase) and the harness's own fault actions, read through the fault
// registry (faults.Explains: which restart causes a fault type brings about).
//
// Status is ground truth; events are explanation and may arrive after the status or never (they are
// aggregated and rate-limited). Attribute therefore works on whatever evidence is on the timeline at
// the moment it is called: call it live for a best guess and again over the finished timeline
// (see observers.AttributeRestarts) for the final word.
package restartcause

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/timeline"
)

// LateSlack is how long after a restart was observed an event may still arrive and count as its
// explanation (events reach the watch independently of the pod status).
const LateSlack = 5 * time.Second

// apiSlack absorbs the one-second resolution of API timestamps.
const apiSlack = time.Second

// killRE matches the kubelet's Killing message for a probe kill, e.g.
// "Container app failed liveness probe, will be restarted".
var killRE = regexp.MustCompile(`^Container (\S+) failed (liveness|startup) probe`)

// Exit codes of a process ended by SIGKILL and SIGTERM.
const (
	exitSIGKILL = 128 + 9
	exitSIGTERM = 128 + 15
)

// Attribute returns the cause of the restart entry r (Kind restart) and a one-line evidence note,
// using the other entries of the same timeline. entries must be in time order (as
// Timeline.Entries returns them) and may include r itself.
func Attribute(r timeline.Entry, entries []timeline.Entry) (timeline.RestartCause, string) {
	if r.Restart == nil {
		return timeline.CauseUnknown, "not a restart entry"
	}
	c := r.Restart
	from, to := window(r, entries)

	if c.Reason == "OOMKilled" {
		return timeline.CauseOOM, fmt.Sprintf("lastState.terminated reason OOMKilled, exit code %d", c.ExitCode)
	}

	var (
		kill                 *timeline.Entry
		killProbe            string
		liveFails, startFail int32
		evicted              string
		deleting             bool
	)
	for i := range entries {
		e := &entries[i]
		if e.Pod != r.Pod {
			continue
		}
		switch e.Kind {
		case timeline.KindEvent:
			if e.Event == nil || !inWindow(e, c, from, to) {
				continue
			}
			switch e.Event.Reason {
			case "Killing":
				if m := killRE.FindStringSubmatch(e.Event.Message); m != nil && m[1] == c.Container {
					kill, killProbe = e, m[2]
				}
			case "Evicted", "Preempting", "Preempted":
				evicted = e.Event.Reason + ": " + e.Event.Message
			}
		case timeline.KindProbe:
			if e.Probe == nil || (e.Probe.Container != "" && e.Probe.Container != c.Container) || !inWindow(e, c, from, to) {
				continue
			}
			switch e.Probe.Probe {
			case timeline.ProbeLiveness:
				liveFails++
			case timeline.ProbeStartup:
				startFail++
			}
		case timeline.KindPod:
			if e.PodChange == nil || e.T > r.T+LateSlack {
				continue
			}
			switch {
			case e.PodChange.Field == "deleting" || e.PodChange.Field == "deleted":
				deleting = true
			case e.PodChange.Field == "phase" && e.PodChange.Detail == "Evicted":
				evicted = "pod status reason Evicted"
			case e.PodChange.Field == "condition/DisruptionTarget" && e.PodChange.To == "True" && strings.Contains(e.PodChange.Detail, "Eviction"):
				evicted = "DisruptionTarget " + e.PodChange.Detail
			}
		}
	}
	active, podFaults := activeFaults(r, entries)

	exit := fmt.Sprintf("exit code %d", c.ExitCode)
	if c.Reason != "" {
		exit = fmt.Sprintf("%s, exit code %d", c.Reason, c.ExitCode)
	}
	if kill != nil {
		cause := timeline.CauseLiveness
		if killProbe == "startup" {
			cause = timeline.CauseStartup
		}
		return cause, fmt.Sprintf("Killing event %q; %s", kill.Event.Message, exit)
	}
	if evicted != "" {
		return timeline.CauseEviction, fmt.Sprintf("%s; %s", evicted, exit)
	}
	if deleting {
		note := "pod deletion (deletionTimestamp set or pod gone)"
		if f := explaining(podFaults, timeline.CauseDeletion); f != "" {
			note += "; harness fault " + f
		}
		return timeline.CauseDeletion, fmt.Sprintf("%s; %s", note, exit)
	}
	if f := explaining(podFaults, timeline.CauseEviction); f != "" {
		return timeline.CauseEviction, fmt.Sprintf("harness fault %s; %s", f, exit)
	}
	killedBySignal := c.ExitCode == exitSIGKILL || c.ExitCode == exitSIGTERM || c.ExitCode == 0
	if killedBySignal && (liveFails > 0 || startFail > 0) {
		// The Killing event is missing (lossy events); failed probes right before a kill-shaped exit
		// are the next best evidence.
		cause, n, kind := timeline.CauseLiveness, liveFails, "liveness"
		if startFail > liveFails {
			cause, n, kind = timeline.CauseStartup, startFail, "startup"
		}
		return cause, fmt.Sprintf("no Killing event; %d %s probe failure event(s) before the restart; %s", n, kind, exit)
	}
	note := ""
	if liveFails+startFail > 0 {
		note = fmt.Sprintf("; %d probe failure event(s) seen but the exit code is the app's own", liveFails+startFail)
	}
	if len(active) > 0 {
		note += "; during harness fault " + strings.Join(active, ",")
	}
	if c.ExitCode == exitSIGKILL {
		return timeline.CauseUnknown, fmt.Sprintf("SIGKILL without a Killing event, not OOMKilled; %s%s", exit, note)
	}
	if c.Reason == "" && c.FinishedAt == nil && c.ExitCode == 0 {
		return timeline.CauseUnknown, "no termination state reported" + note
	}
	return timeline.CauseAppExit, fmt.Sprintf("the process exited by itself: %s%s", exit, note)
}

// window returns the receive-time window (from, to] in which evidence belongs to r: after the
// previous restart of the same container and at most LateSlack after r (or up to the next restart).
func window(r timeline.Entry, entries []timeline.Entry) (from, to time.Duration) {
	from, to = -1<<62, r.T+LateSlack
	for _, e := range entries {
		if e.Kind != timeline.KindRestart || e.Restart == nil || e.Pod != r.Pod || e.Restart.Container != r.Restart.Container || e.Seq == r.Seq {
			continue
		}
		if e.T < r.T || (e.T == r.T && e.Seq < r.Seq) {
			if e.T > from {
				from = e.T
			}
		} else if e.T < to {
			to = e.T
		}
	}
	return from, to
}

// inWindow reports whether evidence e belongs to the restart with facts c. When both carry API
// times, the event must not be later than the termination (plus resolution slack); the receive-time
// window always applies.
func inWindow(e *timeline.Entry, c *timeline.ContainerRestart, from, to time.Duration) bool {
	if e.T <= from || e.T > to {
		return false
	}
	if e.APITime != nil && c.FinishedAt != nil && e.APITime.After(c.FinishedAt.Add(apiSlack)) {
		return false
	}
	return true
}

// activeFaults returns the types of the harness faults injected before r (up to LateSlack after it)
// and not reverted before it: all of them, and those aimed at r's pod. A fault counts as aimed at
// the pod only until the grace period its proof reported (grace_s; else defaultGrace) + LateSlack
// after its inject: aimed-at faults explain deletions and evictions, and a one-shot deletion or
// eviction is never reverted, yet ends its pod once; it must not explain the pod's later exits for
// the rest of the run (audit N9).
func activeFaults(r timeline.Entry, entries []timeline.Entry) (all, atPod []string) {
	type key struct{ typ, name, target string }
	active := map[key]*timeline.FaultAction{}
	injected := map[key]time.Duration{}
	grace := map[key]time.Duration{}
	var order []key
	for i := range entries {
		e := &entries[i]
		if e.Kind != timeline.KindFault || e.Fault == nil || e.T > r.T+LateSlack {
			continue
		}
		k := key{e.Fault.Type, e.Fault.Name, e.Fault.Target}
		switch e.Fault.Action {
		case timeline.FaultInject:
			if _, ok := active[k]; !ok {
				order = append(order, k)
			}
			active[k], injected[k] = e.Fault, e.T
			delete(grace, k)
		case timeline.FaultObserve:
			if g, err := strconv.Atoi(e.Fault.Params["grace_s"]); err == nil && g >= 0 {
				grace[k] = time.Duration(g) * time.Second
			}
		case timeline.FaultRevert:
			if e.T < r.T {
				delete(active, k)
			}
		}
	}
	for _, k := range order {
		f, ok := active[k]
		if !ok {
			continue
		}
		all = append(all, f.Type)
		g, ok := grace[k]
		if !ok {
			g = defaultGrace
		}
		if (f.Target == r.Pod || f.Params["pod"] == r.Pod) && r.T <= injected[k]+g+LateSlack {
			atPod = append(atPod, f.Type)
		}
	}
	return all, atPod
}

// defaultGrace is Kubernetes' default terminationGracePeriodSeconds, for a deleting fault whose
// proof reported no grace period.
const defaultGrace = 30 * time.Second

// explaining returns the first of the fault types that, by its registration, brings about a restart
// with cause in the pod it acts on; "" when none does.
func explaining(types []string, cause timeline.RestartCause) string {
	for _, t := range types {
		if faults.Explains(t, cause) {
			return t
		}
	}
	return ""
}
