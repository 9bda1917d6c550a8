package verdict

import (
	"fmt"

	"github.com/probegate/probegate/internal/timeline"
)

// attributionCount is how far a set of requests names the pods that served them: of the requests
// that reached a pod, those that name a pod of the run, those whose header named something that is
// no pod of the run (a constant or a Deployment's name: not attributed), and the attributed ones
// whose connection conntrack traced to another pod than the header named.
type attributionCount struct {
	reached, attributed, namesNoPod, disagreed int
	firstDisagreement                          string
}

// countAttribution counts reqs against the run's pods.
func countAttribution(reqs []timeline.Request, pods timeline.PodNames) attributionCount {
	var c attributionCount
	for _, q := range reqs {
		if !q.Reached() {
			continue
		}
		c.reached++
		switch {
		case q.Pod == "":
			continue
		case !pods.Names(q.Pod):
			c.namesNoPod++
			continue
		}
		c.attributed++
		if q.ConntrackPod != "" && q.ConntrackPod != q.Pod {
			c.disagreed++
			if c.firstDisagreement == "" {
				c.firstDisagreement = fmt.Sprintf("seq %d at %s: header %s, conntrack %s", q.Seq, dur(q.T), q.Pod, q.ConntrackPod)
			}
		}
	}
	return c
}

func (c attributionCount) coverage() float64 {
	if c.reached == 0 {
		return 1
	}
	return float64(c.attributed) / float64(c.reached)
}

// coverageGap says why the counted requests (what names them) cannot be judged per pod: fewer than
// timeline.MinAttributionCoverage of them name a pod of the run ("" when enough do).
func (c attributionCount) coverageGap(what string) string {
	if c.reached == 0 || c.coverage() >= timeline.MinAttributionCoverage {
		return ""
	}
	var s string
	if c.attributed == 0 {
		s = fmt.Sprintf("none of the %d %s could be attributed to a pod", c.reached, what)
		if c.namesNoPod == 0 {
			return s + " (the target names no pod in its responses and no connection was traced)"
		}
	} else {
		s = fmt.Sprintf("only %d of the %d %s could be attributed to one (%.2f %%, below %.0f %%): %d of them unattributed",
			c.attributed, c.reached, what, 100*c.coverage(), 100*timeline.MinAttributionCoverage, c.reached-c.attributed)
	}
	if c.namesNoPod > 0 {
		s += fmt.Sprintf("; %d of them name no pod of the run (the pod header carries something other than the serving pod's name)", c.namesNoPod)
	}
	return s
}

// disagreementGap says why the header cannot be trusted for the counted requests: conntrack traced
// more than timeline.MaxAttributionDisagreement of the attributed ones to another pod.
func (c attributionCount) disagreementGap(what string) string {
	if c.disagreed == 0 || float64(c.disagreed) <= timeline.MaxAttributionDisagreement*float64(c.attributed) {
		return ""
	}
	return fmt.Sprintf("conntrack traced %d of the %d attributed %s (%.2f %%, above %.0f %%) to another pod than their pod header named (first: %s): the header per-pod traffic is read from cannot be trusted",
		c.disagreed, c.attributed, what, 100*float64(c.disagreed)/float64(c.attributed), 100*timeline.MaxAttributionDisagreement, c.firstDisagreement)
}

// attributionGaps says why the run's requests cannot be judged per pod, one line a gap, and adds
// the attribution figures to res. It counts every request that reached a pod, and apart those sent
// inside the windows res judged (Result.Windows: for no-traffic-after-withdrawal, the withdrawn
// pods' windows), where the few requests that matter are: a run-wide 99 % can leave most of them
// unattributed. A header value that names no pod of the run is not attributed, and header/conntrack
// disagreement counts against the header.
func attributionGaps(in Input, res *Result) []string {
	pods := timeline.RunPods(in.Entries)
	var judged []timeline.Request
	for _, q := range in.Requests {
		for _, w := range res.Windows {
			if q.T >= w.From && q.T <= w.To {
				judged = append(judged, q)
				break
			}
		}
	}
	run, win := countAttribution(in.Requests, pods), countAttribution(judged, pods)
	res.figure("attribution_coverage", run.coverage())
	res.figure("header_names_no_pod", float64(run.namesNoPod))
	res.figure("attribution_disagreed", float64(run.disagreed))
	if len(res.Windows) > 0 {
		res.figure("attribution_coverage_judged", win.coverage())
		res.figure("unattributed_judged", float64(win.reached-win.attributed))
		res.figure("attribution_disagreed_judged", float64(win.disagreed))
	}
	var gaps []string
	for _, g := range []string{
		run.coverageGap("requests that reached a pod"),
		win.coverageGap("requests that reached a pod inside the windows judged"),
		run.disagreementGap("requests"),
		win.disagreementGap("requests inside the windows judged"),
	} {
		if g != "" {
			gaps = append(gaps, g)
		}
	}
	return gaps
}
