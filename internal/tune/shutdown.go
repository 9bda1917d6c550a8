package tune

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// podExit is a deleted pod's container exit.
type podExit struct {
	ev     Evidence
	grace  time.Duration // the grace period the deletion gave
	forced bool
}

// exits measures each deleted pod of the workload: from its deletion (the pod watch seeing
// deletionTimestamp set) to its container terminating (the watch seeing the terminated state). The
// span holds the withdrawal delay, the drain and the cleanup: the timeline has no marker between
// the last two. An exit with code 137 or past the grace period is forced: the drain did not finish.
func exits(s *scenarioRun) (out []podExit, unseen []Evidence) {
	c := s.settings.Container
	type del struct {
		t     time.Duration
		seq   int64
		grace time.Duration
	}
	open := map[string]*del{}
	for _, e := range s.entries {
		if e.Kind != timeline.KindPod || e.PodChange == nil {
			continue
		}
		pc := e.PodChange
		switch {
		case pc.Field == "deleting":
			if open[e.Pod] != nil {
				continue
			}
			g := s.settings.Oracle.Termination.GracePeriod
			if pc.GracePeriodSeconds != nil {
				g = time.Duration(*pc.GracePeriodSeconds) * time.Second
			}
			open[e.Pod] = &del{e.T, e.Seq, g}
		case pc.Field == "container/"+c+"/state" && strings.HasPrefix(pc.To, "terminated"):
			d := open[e.Pod]
			if d == nil {
				continue
			}
			delete(open, e.Pod)
			code := exitCode(pc.To)
			x := podExit{grace: d.grace, forced: code == 137 || e.T-d.t > d.grace+time.Second}
			how := "exited by itself"
			if x.forced {
				how = "FORCE-KILLED"
			}
			x.ev = s.evidence(e.Pod, d.t, e.T, d.seq, "deleted at %s (seq %d, grace %s) → container %s (%s) at %s (seq %d): %s after deletion, %s",
				at(d.t), d.seq, secs(d.grace), c, pc.To, at(e.T), e.Seq, secs(e.T-d.t), how)
			out = append(out, x)
		case pc.Field == "deleted":
			if d := open[e.Pod]; d != nil {
				unseen = append(unseen, s.evidence(e.Pod, d.t, e.T, d.seq, "deleted at %s; the container's exit was not observed before the pod was gone at %s", at(d.t), at(e.T)))
				delete(open, e.Pod)
			}
		}
	}
	return out, unseen
}

// exitCode reads the code of a "terminated:Reason:Code" container state, -1 when there is none.
func exitCode(state string) int {
	i := strings.LastIndexByte(state, ':')
	if i < 0 {
		return -1
	}
	n, err := strconv.Atoi(state[i+1:])
	if err != nil {
		return -1
	}
	return n
}

// longestServed is the longest successful request of the scenario: the work an admitted request
// took, a floor for the drain when a forced kill hid the drain's own length.
func longestServed(s *scenarioRun) (Evidence, bool) {
	var best *timeline.Request
	for i, q := range s.requests {
		if q.OK() && (best == nil || q.Latency > best.Latency) {
			best = &s.requests[i]
		}
	}
	if best == nil {
		return Evidence{}, false
	}
	ev := s.evidence(best.Pod, best.T, best.End(), 0, "longest successful request %d (pod %s) took %s", best.Seq, best.Pod, secs(best.Latency))
	ev.RequestSeq = best.Seq
	return ev, true
}

// recommendGrace: terminationGracePeriodSeconds ≥ withdrawal delay (as recommended) + the longest
// measured drain and cleanup + margin. The drain and cleanup are a clean exit's time after
// deletion less the withdrawal delay it ran with; when the spec's own grace period force-killed a
// drain, the longest successful request stands in for it (a floor, said as such).
func recommendGrace(g *group, withdrawal Recommendation, opts Options) Recommendation {
	st := g.settings
	term := st.Oracle.Termination
	rec := Recommendation{Field: "terminationGracePeriodSeconds", Current: secs(term.GracePeriod)}
	if st.grace == nil && st.container != nil {
		rec.Current += " (unset: the default)"
	}
	wd := term.Withdrawal
	wdWords := fmt.Sprintf("withdrawal %s (current, %s)", secs(wd), term.WithdrawalSource)
	if withdrawal.Status == Change {
		n, _ := strconv.Atoi(strings.TrimSuffix(withdrawal.Recommended, " s"))
		wd = time.Duration(n) * time.Second
		wdWords = fmt.Sprintf("withdrawal %s (recommended above)", secs(wd))
	}
	var drains, forcedAtSpec, ignored, unseen []Evidence
	var served []Evidence
	for _, s := range g.scenarios {
		xs, un := exits(s)
		unseen = append(unseen, un...)
		for _, x := range xs {
			switch {
			case !x.forced:
				d := x.ev
				d.Value = max(x.ev.Value-term.Withdrawal, 0)
				d.Note += fmt.Sprintf("; less the %s withdrawal delay it ran with: drain + cleanup %s", secs(term.Withdrawal), secs(d.Value))
				drains = append(drains, d)
			case x.grace < term.GracePeriod:
				x.ev.Note += fmt.Sprintf("; the deletion cut the grace period to %s (the scenario's, not the spec's %s): says nothing about the spec's", secs(x.grace), secs(term.GracePeriod))
				x.ev.ignored = true
				ignored = append(ignored, x.ev)
			default:
				forcedAtSpec = append(forcedAtSpec, x.ev)
				if ev, ok := longestServed(s); ok {
					served = append(served, ev)
				}
			}
		}
	}
	if len(drains) == 0 && len(forcedAtSpec) == 0 {
		rec.Status = LeftAlone
		rec.Why = "no deleted pod's exit was measured against the spec's grace period"
		rec.Evidence = append(ignored, unseen...)
		rec.Supply = "pod-delete-under-load or long-request-drain (a pod deleted under load with the spec's own grace period)"
		return rec
	}
	var drain Evidence
	basis := ""
	if len(drains) > 0 {
		drain = longest(drains)
		basis = fmt.Sprintf("longest measured drain + cleanup %s (of %d clean exits)", secs(drain.Value), len(drains))
	}
	if len(forcedAtSpec) > 0 {
		if len(served) == 0 {
			rec.Status = LeftAlone
			rec.Why = fmt.Sprintf("%d drains were force-killed at the spec's grace period and no request succeeded to show how long admitted work takes", len(forcedAtSpec))
			rec.Evidence = forcedAtSpec
			rec.Supply = "long-request-drain with a longer grace period (so a drain can finish and be measured)"
			return rec
		}
		if w := longest(served); w.Value > drain.Value {
			drain = w
			basis = fmt.Sprintf("longest successful request %s (the drain was force-killed at grace %s, so its own length is unknown; admitted work is a floor for it)", secs(w.Value), secs(term.GracePeriod))
		}
	}
	need := wd + drain.Value + opts.GraceMargin
	n := wholeSeconds(need)
	rec.Evidence = dedupe(append(append(append([]Evidence{drain}, forcedAtSpec...), drains...), ignored...))
	rec.Formula = fmt.Sprintf("grace ≥ %s + %s + margin %s = %s → %d s", wdWords, basis, secs(opts.GraceMargin), secs(need), n)
	if term.GracePeriod >= time.Duration(n)*time.Second {
		rec.Status, rec.Recommended = Keep, rec.Current
		rec.Why = "the grace period covers withdrawal, the longest measured drain and cleanup, with margin"
		return rec
	}
	rec.Status, rec.Recommended = Change, fmt.Sprintf("%d s", n)
	rec.Why = "withdrawal, the longest measured drain and cleanup with margin do not fit the grace period: a full drain would be force-killed"
	rec.patch = &fieldPatch{path: []string{"terminationGracePeriodSeconds"}, value: n}
	return rec
}
