package verdict

import (
	"fmt"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "terminating-before-exit",
		Title: "A deleted pod's endpoint is withdrawn before its process exits",
		Doc: "For every deleted pod, the endpoint is ready=false (terminating) or removed before the container is " +
			"observed terminated (or the pod deleted), and the process outlives the withdrawal by at least the oracle's " +
			"propagation: kube-proxy keeps routing new connections to it until then. Kubernetes withdraws a deleted " +
			"pod's endpoint on its own within milliseconds, so the lead is what shows the app waited for routing to stop; " +
			"a process that exits at once on SIGTERM fails. The lead counts from the later of the withdrawal and the " +
			"kubelet's kill (its Killing event, which precedes the preStop hook and SIGTERM): a busy kubelet that is slow to " +
			"send SIGTERM gives any process a lead, which says nothing about the app. The lead must hold from the earliest " +
			"the process can have exited (its finishedAt, which the API truncates to the second); when only the latest " +
			"exit (finishedAt + 1s, or when it was seen) clears it, when the Killing event is missing (events are lossy), " +
			"or when no container exit was seen but the pod's deletion (which comes later), that pod is INCONCLUSIVE, " +
			"saying why. A lead short even from the latest exit, counted from the withdrawal when no Killing event was seen, fails. " +
			"In a pod of several containers the exit judged is the app's container's (the oracle's: the one whose probes are under test). " +
			"Through a front door that keeps its own record (an ingress controller), that door is what goes on sending a withdrawn pod " +
			"requests: when its lag measured in the run (the last request its access log sent a pod after the pod's withdrawal) is longer " +
			"than the propagation, it is the lead required; a quicker door never lowers the bound.",
		Params: []ParamSpec{
			{Name: "pods", Kind: KindList, Doc: "only judge these pods (default: every deleted pod)"},
			{Name: "min-lead", Kind: KindDuration, Doc: "how long the process must outlive its withdrawal; default the oracle's propagation (any value given is a tolerance; 0 is refused)",
				Loosens: anyValue, Vacuous: vacuousAt("a process that exits with its withdrawal outlives it by 0")},
		},
		Needs: NeedsFaultEffect | NeedsEndpoints,
		Judge: judgeTerminatingBeforeExit,
	})
}

func judgeTerminatingBeforeExit(in Input) Result {
	minLeadWant, basis, router := leadBound(in)
	r := Result{Status: Pass, Expected: fmt.Sprintf("each deleted pod's endpoint ready=false/terminating at least %s (%s) before its process exits", dur(minLeadWant), basis)}
	if _, skipped := in.selectedFaults(); len(skipped) > 0 && len(deletedPods(in)) == 0 {
		return skippedResult(skipped)
	}
	eps := buildEndpoints(in.Entries)
	pods := buildPods(in.Entries)
	container := in.container()
	var observed []string
	minLead := -1.0
	judged := 0
	for _, name := range deletedPods(in) {
		p := pods[name]
		judged++
		exit, ok := p.exitAfter(p.Deleting.T, container)
		if !ok {
			r.failAt(p.Deleting.T)
			r.add(atEntry(p.Deleting.T, p.Deleting.Seq, "%s deleted; its exit was never observed", name))
			observed = append(observed, name+": exit not observed")
			continue
		}
		before := eps.At(name, exit.T-1)
		if len(eps.ByPod[name]) == 0 {
			r.failAt(exit.T)
			r.add(atEntry(exit.T, exit.Seq, "%s exited; it never had an endpoint on the timeline", name))
			observed = append(observed, name+": no endpoint seen")
			continue
		}
		if before.InRotation() {
			r.failAt(exit.T)
			r.add(atEntry(p.Deleting.T, p.Deleting.Seq, "%s deleting", name))
			r.add(atEntry(exit.T, exit.Seq, "%s exited (%s) while its endpoint was still ready", name, exitWords(exit)))
			observed = append(observed, name+": exited while still ready")
			continue
		}
		if exit.Deletion {
			// The deleted mark comes after the exit, by however long the kubelet and the API took.
			r.unshown(fmt.Sprintf("%s: no container exit was seen, only the pod's deletion at %s, which comes after the exit by an unknown time: its lead is not known",
				name, dur(exit.T)))
			r.add(atEntry(exit.T, exit.Seq, "%s deleted; no container exit seen", name))
			observed = append(observed, name+": exit not seen (only its deletion)")
			continue
		}
		from := lastWithdrawal(eps, name, exit.T)
		// The Killing event and the deletion come through separate watches: the event can arrive first.
		kill, killed := killingAt(in.Entries, name, p.Deleting.T-timeline.WatchLag, exit.T)
		if killed && kill > from {
			from = kill
		}
		since := "its withdrawal"
		if killed && kill == from {
			since = "the kubelet began killing it (after its withdrawal)"
		}
		// The process exited in [earliest, latest]: finishedAt is truncated to its second.
		latest := exit.latestExit() - from
		earliest, bounded := exit.earliestExit()
		earliest -= from
		lead := latest
		if bounded {
			lead = earliest
		}
		if latest < minLeadWant {
			lead = latest
		}
		r.measure("withdrawal lead before exit", "s", AtLeast, secs(lead), secs(minLeadWant))
		if minLead < 0 || secs(lead) < minLead {
			minLead = secs(lead)
		}
		r.add(atEntry(before.T, before.Seq, "%s endpoint ready=false terminating=%v", name, before.Terminating))
		var unknown string
		switch {
		case latest < minLeadWant:
			r.failAt(exit.T)
			r.add(atEntry(exit.T, exit.Seq, "%s exited (%s) only %s after %s: %s for up to %s",
				name, exitWords(exit), dur(latest), since, router, dur(minLeadWant)))
			observed = append(observed, fmt.Sprintf("%s exited %s after its withdrawal or kill (< %s)", name, dur(latest), dur(minLeadWant)))
			continue
		case !killed:
			unknown = fmt.Sprintf("%s: no Killing event was seen between its deletion and its exit (events are lossy): the lead counts from when the kubelet began killing it, which is not known; "+
				"from its withdrawal it was %s", name, leadWords(earliest, latest, bounded))
		case !bounded:
			unknown = fmt.Sprintf("%s: its exit reported no finishedAt: it was seen %s after %s, but how much earlier it exited is not known", name, dur(latest), since)
		case earliest < minLeadWant:
			unknown = fmt.Sprintf("%s: exited %s after %s (finishedAt is to the second), so it may have outlived it by less than %s",
				name, leadWords(earliest, latest, bounded), since, dur(minLeadWant))
		}
		if unknown != "" {
			r.unshown(unknown)
			r.add(atEntry(exit.T, exit.Seq, "%s exited (%s): lead not shown", name, exitWords(exit)))
			observed = append(observed, name+": lead not shown")
			continue
		}
		r.add(atEntry(exit.T, exit.Seq, "%s exited (%s) %s later", name, exitWords(exit), dur(earliest)))
		observed = append(observed, fmt.Sprintf("%s withdrawn %s before exit", name, dur(earliest)))
	}
	if judged == 0 {
		r.nothingToJudge("no pod was deleted: nothing to judge")
		return r
	}
	r.Observed = strings.Join(observed, "; ")
	r.figure("deleted_pods", float64(judged))
	if minLead >= 0 {
		r.figure("min_lead_s", minLead)
	}
	return r
}

// leadBound is the lead each process must show, what it rests on, and what may still send the pod
// new work meanwhile. The oracle's propagation is kube-proxy's; when the load came through a front
// door that keeps its own record (an ingress controller), that door is the hop that goes on
// sending a withdrawn pod requests, and its lag measured in this run (timeline.MeasureDoorLag)
// raises the bound when it is longer. It never lowers it: one run's lag is a sample, and the
// oracle's allowance stays the floor. A min-lead parameter replaces both (a tolerance).
func leadBound(in Input) (time.Duration, string, string) {
	if in.Params.Has("min-lead") {
		return in.Params.Duration("min-lead", 0), "min-lead", "kube-proxy may route new connections to it"
	}
	want := in.Oracle.Propagation
	door := timeline.MeasureDoorLag(in.Entries, in.Requests)
	if door == nil {
		return want, "propagation", "kube-proxy may route new connections to it"
	}
	router := "the front door may send it new requests"
	if door.Max > want {
		return door.Max, fmt.Sprintf("the front door's lag: it sent a withdrawn pod requests up to %s after its withdrawal, its access log, above the %s propagation",
			dur(door.Max), dur(want)), router
	}
	return want, fmt.Sprintf("propagation; the front door's own lag was at most %s, its access log", dur(door.Max)), router
}

// deletedPods returns the pods with a deletion on the timeline (restricted by "pods"), sorted.
func deletedPods(in Input) []string {
	only := setOf(in.Params.List("pods"))
	pods := buildPods(in.Entries)
	var out []string
	for _, n := range sortedPodNames(pods) {
		if pods[n].Deleting != nil && (len(only) == 0 || only[n]) {
			out = append(out, n)
		}
	}
	return out
}

// leadWords is a lead known to lie between earliest and latest ("between 1.9s and 2.9s"), or only
// to be at most latest.
func leadWords(earliest, latest time.Duration, bounded bool) string {
	if !bounded {
		return "at most " + dur(latest)
	}
	return fmt.Sprintf("between %s and %s", dur(earliest), dur(latest))
}

func exitWords(x containerExit) string {
	var parts []string
	if x.Container != "" {
		parts = append(parts, "container "+x.Container)
	}
	if x.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("exit code %d", *x.ExitCode))
	}
	if x.Reason != "" {
		parts = append(parts, x.Reason)
	}
	if len(parts) == 0 {
		return "terminated"
	}
	return strings.Join(parts, ", ")
}

// lastWithdrawal is when pod's endpoint last left rotation at or before t (its first step when it
// was never in rotation): the moment kube-proxy began to stop routing to it.
func lastWithdrawal(eps endpointHistory, pod string, t time.Duration) time.Duration {
	var at time.Duration
	in := false
	for i, s := range eps.ByPod[pod] {
		if s.T > t {
			break
		}
		if i == 0 || (in && !s.InRotation()) {
			at = s.T
		}
		in = s.InRotation()
	}
	return at
}

// killingAt is when the kubelet's Killing event for pod arrived in [from, to]: it starts the
// container's stop (preStop hook, then SIGTERM).
func killingAt(entries []timeline.Entry, pod string, from, to time.Duration) (time.Duration, bool) {
	for _, e := range entries {
		if e.Kind == timeline.KindEvent && e.Pod == pod && e.Event != nil && e.Event.Reason == "Killing" && e.T >= from && e.T <= to {
			return e.T, true
		}
	}
	return 0, false
}
