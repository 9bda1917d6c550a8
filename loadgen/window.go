package loadgen

import (
	"math"
	"slices"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// window collects the requests that started in one second of load.
type window struct {
	sent, ok  int
	latencies []time.Duration
	byPod     map[string]int
	errors    map[string]int
}

// windower groups requests by the second of load they started in and appends each second's
// LoadWindow to the timeline once every request that started in it must have completed (its end plus
// the request timeout plus a grace period has passed). Windows with no requests are written too: a
// second in which nothing was sent is a fact worth seeing.
type windower struct {
	tl    *timeline.Timeline
	start time.Time     // load start: window k covers [start+k s, start+(k+1) s)
	lag   time.Duration // how long after a window ends it is closed
	open  map[int]*window
	next  int // the first window not yet written
	late  int // requests that arrived after their window was written
}

func newWindower(tl *timeline.Timeline, start time.Time, lag time.Duration) *windower {
	return &windower{tl: tl, start: start, lag: lag, open: map[int]*window{}}
}

func (w *windower) add(r timeline.Request, startedAt time.Time) {
	k := int(startedAt.Sub(w.start) / time.Second)
	if k < 0 {
		k = 0
	}
	if k < w.next {
		w.late++
		return
	}
	win := w.open[k]
	if win == nil {
		win = &window{byPod: map[string]int{}, errors: map[string]int{}}
		w.open[k] = win
	}
	win.sent++
	if r.OK() {
		win.ok++
	}
	win.latencies = append(win.latencies, r.Latency)
	if r.Pod != "" {
		win.byPod[r.Pod]++
	}
	if r.Error != timeline.ErrNone {
		win.errors[string(r.Error)]++
	}
}

// closeUntil writes every window that ended at least lag before now.
func (w *windower) closeUntil(now time.Time) {
	for !w.start.Add(time.Duration(w.next+1)*time.Second + w.lag).After(now) {
		w.emit(w.next, time.Second)
	}
}

// minSpan is the shortest final window rated over its own length; a shorter one only holds a few
// late-started requests spilling over the end, and is rated over a full second instead.
const minSpan = 100 * time.Millisecond

// closeAll writes the remaining windows up to the one holding end (the instant the load stopped
// sending). A trailing window with no requests is dropped: it only holds the instant of stopping.
func (w *windower) closeAll(end time.Time) {
	last := int(end.Sub(w.start) / time.Second)
	for k := range w.open {
		last = max(last, k)
	}
	for w.next <= last {
		span := time.Second
		if rest := end.Sub(w.start.Add(time.Duration(w.next) * time.Second)); rest < span && rest >= minSpan {
			span = rest
		}
		if w.next == last && w.open[last] == nil {
			return
		}
		w.emit(w.next, span)
	}
}

func (w *windower) emit(k int, span time.Duration) {
	win := w.open[k]
	delete(w.open, k)
	w.next = k + 1
	lw := &timeline.LoadWindow{Second: k, SuccessRatio: 1}
	if win != nil {
		lw.Sent, lw.OK, lw.Failed = win.sent, win.ok, win.sent-win.ok
		lw.SuccessRatio = float64(win.ok) / float64(win.sent)
		lw.P50, lw.P99 = percentile(win.latencies, 0.50), percentile(win.latencies, 0.99)
		if len(win.byPod) > 0 {
			lw.ByPod = win.byPod
		}
		if len(win.errors) > 0 {
			lw.Errors = win.errors
		}
	}
	if span > 0 {
		lw.Rate = float64(lw.Sent) / span.Seconds()
	}
	w.tl.Append(timeline.Entry{At: w.start.Add(time.Duration(k) * time.Second), Kind: timeline.KindLoad, Load: lw})
}

// percentile returns the exact nearest-rank q-quantile of ds (sorting ds in place); 0 for none.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	rank := int(math.Ceil(q*float64(len(ds))-1e-9)) - 1
	return ds[min(max(rank, 0), len(ds)-1)]
}

// AppendWindows appends to tl the per-second LoadWindows of reqs, a load that started at start and
// stopped sending at end: what a Load writes as it runs, for requests recorded elsewhere (the
// in-cluster agents, merged).
func AppendWindows(tl *timeline.Timeline, start, end time.Time, reqs []timeline.Request) {
	w := newWindower(tl, start, 0)
	for _, q := range reqs {
		w.add(q, q.Start)
	}
	w.closeAll(end)
}
