package verdict

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/oracle"
)

func init() {
	Register(Rule{
		Name:  "even-share",
		Title: "Ready pods share the traffic evenly",
		Doc: "In every window where the set of ready endpoints is stable (after a settle time), the busiest ready " +
			"pod serves at most max-ratio times the requests of the least busy one.",
		Params: []ParamSpec{
			{Name: "max-ratio", Kind: KindFloat, Default: "1.5", Doc: "bound on max/min requests per ready pod", Tolerance: true},
			{Name: "settle", Kind: KindDuration, Doc: "skipped after each change of the ready set; default the oracle's propagation"},
			{Name: "min-window", Kind: KindDuration, Default: "5s", Doc: "shortest stable window judged"},
			{Name: "min-requests", Kind: KindInt, Default: "20", Doc: "fewest requests per ready pod (on average) for a window to be judged"},
		},
		Allowances: []string{oracle.AllowancePropagation},
		Needs:      NeedsEndpoints | NeedsAttribution | NeedsLoad,
		Judge:      judgeEvenShare,
	})
}

func judgeEvenShare(in Input) Result {
	bound := in.Params.Float("max-ratio", 1.5)
	settle := in.Params.Duration("settle", in.Oracle.Propagation)
	minWindow := in.Params.Duration("min-window", 5*time.Second)
	minReq := in.Params.Int("min-requests", 20)
	r := Result{Status: Pass, Expected: fmt.Sprintf("max/min requests per ready pod ≤ %.2f in every stable window ≥ %s (after %s settle)", bound, dur(minWindow), dur(settle))}
	load, ok := in.loadSpan()
	if !ok {
		r.nothingToJudge("no load on the timeline: nothing to judge")
		return r
	}
	eps := buildEndpoints(in.Entries)
	type window struct {
		from, to time.Duration
		seq      int64
		ready    []string
	}
	windows := []window{{from: load.Start, ready: eps.ReadyAt(load.Start)}}
	for _, s := range eps.steps() {
		if s.T <= load.Start || s.T > load.End {
			continue
		}
		if strings.Join(s.Ready, ",") == strings.Join(windows[len(windows)-1].ready, ",") {
			continue
		}
		windows[len(windows)-1].to = s.T
		windows = append(windows, window{from: s.T + settle, seq: s.Seq, ready: s.Ready})
	}
	windows[len(windows)-1].to = load.End
	reqs := in.sortedRequests()

	judged := 0
	worst := 0.0
	for _, w := range windows {
		if len(w.ready) < 2 || w.to-w.from < minWindow {
			continue
		}
		counts := map[string]int{}
		total := 0
		for _, q := range reqs {
			if q.T >= w.from && q.T < w.to && q.Pod != "" {
				counts[q.Pod]++
				total++
			}
		}
		if total < minReq*len(w.ready) {
			continue
		}
		judged++
		hi, lo := 0, math.MaxInt
		var parts []string
		for _, p := range w.ready {
			c := counts[p]
			hi, lo = max(hi, c), min(lo, c)
			parts = append(parts, fmt.Sprintf("%s %d", p, c))
		}
		ratio := float64(hi) / float64(max(lo, 1))
		worst = max(worst, ratio)
		note := fmt.Sprintf("%s–%s, %d ready: %s → ratio %.2f", dur(w.from), dur(w.to), len(w.ready), strings.Join(parts, ", "), ratio)
		r.window("stable ready set", "", w.from, w.to, strings.Join(w.ready, ","))
		if lo == 0 || ratio > bound {
			r.failAt(w.from)
			r.add(atEntry(w.from, w.seq, "UNEVEN %s", note))
		} else {
			r.add(atEntry(w.from, w.seq, "%s", note))
		}
	}
	if judged == 0 {
		r.nothingToJudge(fmt.Sprintf("no stable window ≥ %s with ≥ 2 ready pods and ≥ %d requests per pod: nothing to judge", dur(minWindow), minReq))
		return r
	}
	r.Observed = fmt.Sprintf("worst max/min ratio %.2f over %d stable windows", worst, judged)
	r.figure("worst_ratio", worst)
	r.figure("windows_judged", float64(judged))
	return r
}
