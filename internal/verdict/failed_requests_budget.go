package verdict

import (
	"fmt"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
)

// Failure classes of failed-requests-budget.
const (
	FailReuse       = "connection-reuse"   // a kept-alive connection broke under the request
	FailTermination = "during-termination" // in flight while a pod shut down (deleting → exit + allowance)
	FailWithdrawn   = "after-withdrawal"   // served by a pod withdrawn longer ago than the allowance
	FailDetection   = "before-detection"   // during a fault, before readiness withdrew the faulted pod
	FailOther       = "other"
)

var failClasses = []string{FailDetection, FailWithdrawn, FailTermination, FailReuse, FailOther}

func init() {
	params := []ParamSpec{
		{Name: "max", Kind: KindInt, Default: "0", Doc: "failed requests allowed in total", Tolerance: true},
		{Name: "max-ratio", Kind: KindFloat, Doc: "failed/sent allowed (checked in addition to max when given)", Tolerance: true},
		{Name: "allowance", Kind: KindDuration, Doc: "propagation slack; default the oracle's propagation", Tolerance: true},
	}
	for _, c := range failClasses {
		params = append(params, ParamSpec{Name: "max-" + c, Kind: KindInt, Doc: "failed requests allowed in class " + c, Tolerance: true})
	}
	Register(Rule{
		Name:  "failed-requests-budget",
		Title: "Failed requests stay within budget, each classified",
		Doc: "Counts failed requests and classifies each: connection-reuse (a reused keep-alive connection broke, " +
			"including a request the client silently resent after its first attempt was cut), " +
			"during-termination (in flight while a pod was between deletion and exit), after-withdrawal (served by a withdrawn pod), " +
			"before-detection (during a fault, before its withdrawal), other. Fails when a total or per-class budget is exceeded.",
		Params:     params,
		Allowances: []string{oracle.AllowancePropagation},
		Needs:      NeedsLoad,

		Judge: judgeFailedRequestsBudget,
	})
}

func judgeFailedRequestsBudget(in Input) Result {
	limit := in.Params.Int("max", 0)
	allow := in.Params.Duration("allowance", in.Oracle.Propagation)
	r := Result{Status: Pass}
	var budget []string
	budget = append(budget, fmt.Sprintf("≤ %d failed requests", limit))
	if in.Params.Has("max-ratio") {
		budget = append(budget, fmt.Sprintf("failed/sent ≤ %g", in.Params.Float("max-ratio", 0)))
	}
	for _, c := range failClasses {
		if in.Params.Has("max-" + c) {
			budget = append(budget, fmt.Sprintf("≤ %d %s", in.Params.Int("max-"+c, 0), c))
		}
	}
	r.Expected = strings.Join(budget, ", ")
	if len(in.Requests) == 0 {
		r.nothingToJudge("no requests were recorded: nothing to judge")
		return r
	}
	c := newFailureClassifier(in, allow)
	counts := map[string]int{}
	failed := 0
	var failures []timeline.Request
	var classes []string
	var failedReqs []timeline.Request
	for _, q := range in.Requests {
		// A resent request counts even when the resend succeeded: the server cut the first attempt,
		// which a client that does not retry (any POST) would have seen as a failure.
		if !q.OK() || q.Retried {
			failedReqs = append(failedReqs, q)
		}
	}
	for _, q := range (Input{Requests: failedReqs}).sortedRequests() {
		failed++
		class, why := c.classify(q)
		counts[class]++
		failures = append(failures, q)
		classes = append(classes, class)
		r.add(atRequest(q, "%s: %s", class, requestWords(q)+"; "+why))
	}
	over := func(i int) {
		r.failAt(failures[i].T)
	}
	if failed > limit {
		over(limit)
	}
	if in.Params.Has("max-ratio") && float64(failed)/float64(len(in.Requests)) > in.Params.Float("max-ratio", 0) {
		r.failAt(failures[0].T)
	}
	for _, cl := range failClasses {
		if !in.Params.Has("max-" + cl) {
			continue
		}
		n := 0
		for i, got := range classes {
			if got == cl {
				n++
				if n > in.Params.Int("max-"+cl, 0) {
					over(i)
					break
				}
			}
		}
	}
	var parts []string
	for _, cl := range failClasses {
		parts = append(parts, fmt.Sprintf("%s %d", cl, counts[cl]))
		r.figure("failed_"+strings.ReplaceAll(cl, "-", "_"), float64(counts[cl]))
	}
	r.Observed = fmt.Sprintf("%d of %d requests failed (%s)", failed, len(in.Requests), strings.Join(parts, ", "))
	r.figure("failed", float64(failed))
	if in.Params.Has("max-ratio") {
		r.measure("failed/sent", "ratio", AtMost, float64(failed)/float64(len(in.Requests)), in.Params.Float("max-ratio", 0))
	} else {
		r.measure("failed requests", "requests", AtMost, float64(failed), float64(limit))
	}
	r.figure("sent", float64(len(in.Requests)))
	return r
}

// failureClassifier places a failed request against what the cluster was doing at its start.
type failureClassifier struct {
	allow     time.Duration
	eps       endpointHistory
	pods      map[string]*podLife
	deleted   []string
	faults    []timeline.FaultWindow
	detection map[int]time.Duration // fault index → when its first target withdrew
}

func newFailureClassifier(in Input, allow time.Duration) *failureClassifier {
	c := &failureClassifier{allow: allow, eps: buildEndpoints(in.Entries), pods: buildPods(in.Entries), detection: map[int]time.Duration{}}
	for _, n := range sortedPodNames(c.pods) {
		if c.pods[n].Deleting != nil {
			c.deleted = append(c.deleted, n)
		}
	}
	for _, f := range in.faults() {
		if !f.Skipped {
			c.faults = append(c.faults, f)
		}
	}
	for i, f := range c.faults {
		end := f.End
		if !f.Reverted {
			end = maxDuration
		}
		first := end
		for _, pod := range faultTargets(Input{}, f, c.eps) {
			if !c.eps.At(pod, f.Start).InRotation() {
				first = f.Start // already out of rotation: nothing left to detect
				break
			}
			if w, ok := c.eps.withdrawal(pod, f.Start); ok && w.T < first {
				first = w.T
			}
		}
		c.detection[i] = first
	}
	return c
}

func (c *failureClassifier) classify(q timeline.Request) (class, why string) {
	transport := q.Error.Transport()
	if transport && (q.Reused || strings.Contains(q.Detail, "reused connection")) {
		return FailReuse, "kept-alive connection"
	}
	if q.Retried && q.OK() {
		return FailReuse, "its kept-alive connection broke before the response; the client resent it and the resend succeeded"
	}
	for _, n := range c.deleted {
		p := c.pods[n]
		end := maxDuration
		// Any container's first exit ends the excuse soonest: a sidecar that carries the traffic
		// cuts it too.
		if x, ok := p.exitAfter(p.Deleting.T, ""); ok {
			end = x.T + c.allow
		}
		// In flight while the pod terminated: sent after its deletion, or sent before and cut
		// when it exited (a process that exits at once cuts what it was serving, often before the
		// watch has delivered the deletion).
		if (q.Pod == "" || q.Pod == n) && q.T <= end && q.T+q.Latency >= p.deletedFrom() {
			return FailTermination, fmt.Sprintf("%s was terminating (deleted at %s)", n, dur(p.Deleting.T))
		}
	}
	if q.Pod != "" {
		if s := c.eps.At(q.Pod, q.T-c.allow); s.Seq != 0 && !s.InRotation() {
			return FailWithdrawn, fmt.Sprintf("%s withdrawn at %s", q.Pod, dur(s.T))
		}
	}
	for i, f := range c.faults {
		if q.T < f.Start || q.T > c.detection[i] {
			continue
		}
		if q.Pod == "" || len(f.Pods) == 0 || contains(f.Pods, q.Pod) {
			return FailDetection, fmt.Sprintf("%s started at %s, not yet withdrawn", f.Type, dur(f.Start))
		}
	}
	return FailOther, "no fault, withdrawal or termination explains it"
}

func requestWords(q timeline.Request) string {
	s := fmt.Sprintf("request %d", q.Seq)
	if q.Status != 0 {
		s += fmt.Sprintf(" status %d", q.Status)
	}
	if q.Error != timeline.ErrNone {
		s += " " + string(q.Error)
	}
	if q.Pod != "" {
		s += " from " + q.Pod
	}
	if q.Retried {
		s += " (resent by the client)"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
