package reports

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/internal/verdict"
)

// The SVG timeline is drawn by hand: a time axis scaled to the run, a strip for fault and oracle
// windows, one lane per pod (thin ready / serving / terminating bands, restart markers, probe
// failure ticks), then three per-second panels (success ratio, p99 latency, per-pod share). Fault
// and oracle windows are shaded through every lane and panel; every verdict with a moment (At)
// gets a marker line whose id the verdict table links to.

// Chart geometry, in SVG user units (pixels at 100% zoom).
const (
	chartWidth  = 1320.0
	plotLeft    = 190.0
	plotRight   = chartWidth - 24.0
	axisTop     = 18.0
	stripTop    = 26.0
	stripHeight = 14.0
	verdictLine = 12.0
	laneHeight  = 36.0
	charWidth   = 6.0 // average label glyph width at 10–11 px, for fitting labels
	panelGap    = 14.0
	panelHeight = 64.0
	bottomAxis  = 22.0
)

// podPalette colours pods in the share panel and their lane swatches.
var podPalette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f"}

type chartView struct {
	Width, Height  float64
	PlotLeft       float64
	PlotRight      float64
	AxisTop        float64
	AxisBottom     float64
	GridTop        float64
	GridBottom     float64
	Ticks          []axisTick
	FaultRow       float64
	OracleRow      float64
	VerdictRow     float64
	StripHeight    float64
	Faults         []windowShade
	Oracles        []windowShade
	Marks          []markLine
	Lanes          []laneView
	Panels         []panelView
	Verdicts       []verdictMarker
	LanesBottom    float64
	PlotWidth      float64
	Shades         []rectView
	NoTimelineNote string
}

type axisTick struct {
	X     float64
	Label string
}

// windowShade is a fault or oracle window: a bar in its strip and a shade through the chart.
type windowShade struct {
	X, W, Y float64
	Label   string
	Title   string
	Outside bool // the label does not fit in the bar and is drawn after it
	Before  bool // … or before it, when after it would run off the chart
	LabelX  float64
	Failed  bool // an oracle window a failed verdict judged against
}

func newShade(x0, x1 float64, label, title string) windowShade {
	w := max(x1-x0, 1.5)
	textW := float64(len([]rune(label))) * charWidth
	sh := windowShade{X: x0, W: w, Label: label, Title: title, Outside: textW+8 > w, LabelX: x0 + 4}
	if sh.Outside {
		sh.LabelX = x0 + w + 4
		if sh.LabelX+textW > chartWidth {
			sh.Before, sh.LabelX = true, x0-4
		}
	}
	return sh
}

type markLine struct {
	X     float64
	Title string
}

type laneView struct {
	Pod      string
	Label    string
	Color    string
	Y        float64
	Bands    []rectView
	Restarts []pointView
	Probes   []probeTick
}

type rectView struct {
	X, Y, W, H float64
	Class      string
	Title      string
	Fill       string
}

type pointView struct {
	X, Y  float64
	Label string
	Title string
}

type probeTick struct {
	X, Y1, Y2 float64
	Class     string
	Title     string
}

type panelView struct {
	Title  string
	Class  string
	Y, H   float64
	YTicks []yTick
	Points string
	Bars   []rectView
	Empty  bool
}

type yTick struct {
	Y     float64
	Label string
}

type verdictMarker struct {
	ID     string
	Href   string
	X      float64
	Class  string
	Label  string
	Title  string
	Top    float64 // where the marker line starts
	LabelY float64 // baseline of the label, staggered over two rows so close labels do not collide
	Bottom float64
}

// scale maps offsets to x.
type scale struct{ t0, t1 time.Duration }

func (s scale) x(t time.Duration) float64 {
	t = min(max(t, s.t0), s.t1)
	return round1(plotLeft + float64(t-s.t0)/float64(s.t1-s.t0)*(plotRight-plotLeft))
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// rowPacker assigns intervals to the first row where they do not overlap, up to max rows; past
// that, to the row that frees up first.
type rowPacker struct {
	ends []float64
	max  int
}

func (p *rowPacker) place(x0, x1 float64) int {
	for i, e := range p.ends {
		if e <= x0 {
			p.ends[i] = x1
			return i
		}
	}
	if len(p.ends) < p.max {
		p.ends = append(p.ends, x1)
		return len(p.ends) - 1
	}
	best := 0
	for i := range p.ends {
		if p.ends[i] < p.ends[best] {
			best = i
		}
	}
	p.ends[best] = max(p.ends[best], x1)
	return best
}

func (p *rowPacker) rows() int { return max(len(p.ends), 1) }

// stripWindow is one bar of the oracle strip: windows with the same name and span merged across
// the pods they name.
type stripWindow struct {
	PlacedWindow
	Pods []string
}

func groupWindows(ws []PlacedWindow) []stripWindow {
	var out []stripWindow
	index := map[[3]string]int{}
	for _, w := range ws {
		key := [3]string{w.Name, w.From.String(), w.To.String()}
		i, ok := index[key]
		if !ok || (w.Pod == "") != (len(out[i].Pods) == 0) {
			out = append(out, stripWindow{PlacedWindow: w})
			if w.Pod != "" {
				out[len(out)-1].Pods = []string{w.Pod}
			}
			index[key] = len(out) - 1
			continue
		}
		g := &out[i]
		g.Pods = append(g.Pods, w.Pod)
		g.Failed = g.Failed || w.Failed
		g.Extra = g.Extra || w.Extra
		for _, r := range w.Rules {
			if !contains(g.Rules, r) {
				g.Rules = append(g.Rules, r)
			}
		}
	}
	return out
}

// labelStart is where a bar's label starts (before the bar when drawn there).
func labelStart(sh windowShade) float64 {
	if sh.Before {
		return sh.LabelX - float64(len([]rune(sh.Label)))*charWidth - 2
	}
	return sh.X
}

// labelEnd is where a bar's label ends: inside the bar, or after it when it does not fit.
func labelEnd(sh windowShade) float64 {
	if sh.Outside && !sh.Before {
		return sh.X + sh.W + 8 + float64(len([]rune(sh.Label)))*charWidth
	}
	return sh.X + sh.W + 2
}

// buildChart lays out one scenario's timeline. id prefixes element ids ("s0").
func buildChart(id string, s *ScenarioReport, entries []timeline.Entry, reqs []timeline.Request) chartView {
	end := span(entries, reqs)
	windows := s.PlacedWindows()
	for _, w := range windows {
		end = max(end, w.To)
	}
	for _, v := range s.Verdicts {
		if v.At != nil {
			end = max(end, *v.At)
		}
	}
	end = max(end, time.Second)
	sc := scale{t0: 0, t1: end}
	c := chartView{
		Width: chartWidth, PlotLeft: plotLeft, PlotRight: plotRight, PlotWidth: plotRight - plotLeft,
		AxisTop: axisTop, StripHeight: stripHeight - 2, GridTop: stripTop,
	}
	if len(entries) == 0 && len(reqs) == 0 {
		c.NoTimelineNote = "no timeline recorded"
	}

	// The strips above the lanes: fault windows, oracle windows and failed-verdict labels, each
	// packed into as many rows as overlapping items need.
	faultRows := rowPacker{max: 3}
	var faultRow []int
	for _, f := range FaultIntervals(entries, end) {
		label := f.Type
		if f.Name != "" {
			label += " " + f.Name
		}
		title := fmt.Sprintf("fault %s from %s to %s", label, Offset(f.From), Offset(f.To))
		if f.Target != "" {
			title += " on " + f.Target
		}
		switch {
		case f.Note != "":
			title += ": " + f.Note
			label += " (" + map[bool]string{true: "skipped", false: "unproven"}[f.Skipped] + ")"
		case !f.Reverted:
			title += " (never reverted)"
		}
		sh := newShade(sc.x(f.From), sc.x(f.To), label, title)
		faultRow = append(faultRow, faultRows.place(labelStart(sh), labelEnd(sh)))
		c.Faults = append(c.Faults, sh)
	}
	oracleRows := rowPacker{max: 7}
	var oracleRow []int
	grouped := groupWindows(windows)
	for _, w := range grouped {
		title := fmt.Sprintf("oracle %s: %s – %s", w.Name, Offset(w.From), Offset(w.To))
		if len(w.Rules) > 0 {
			title += " (" + strings.Join(w.Rules, ", ") + ")"
		}
		if len(w.Pods) > 0 {
			title += " for " + strings.Join(w.Pods, ", ")
		}
		if w.Basis != "" {
			title += "; " + w.Basis
		}
		label := w.Name
		switch len(w.Pods) {
		case 0:
		case 1:
			label += " · " + shortPod(w.Pods[0])
		default:
			label += fmt.Sprintf(" · %d pods", len(w.Pods))
		}
		sh := newShade(sc.x(w.From), sc.x(w.To), label, title)
		sh.Failed = w.Failed
		oracleRow = append(oracleRow, oracleRows.place(labelStart(sh), labelEnd(sh)))
		c.Oracles = append(c.Oracles, sh)
	}
	verdictRows := rowPacker{max: 4}
	var verdictRow []int
	for i, v := range s.Verdicts {
		if v.At == nil || v.Status != verdict.Fail {
			continue
		}
		x := sc.x(*v.At)
		label := "✗ " + v.Rule
		verdictRow = append(verdictRow, verdictRows.place(x, x+6+float64(len([]rune(label)))*charWidth))
		c.Verdicts = append(c.Verdicts, verdictMarker{
			ID: verdictMarkerID(id, i), Href: "#" + verdictRowID(id, i), X: x, Class: "verdict-fail",
			Label: label, Title: fmt.Sprintf("%s %s at %s: %s", v.Status, v.Rule, Offset(*v.At), v.Observed),
		})
	}
	c.FaultRow = stripTop
	c.OracleRow = c.FaultRow + float64(faultRows.rows())*stripHeight + 2
	c.VerdictRow = c.OracleRow + float64(oracleRows.rows())*stripHeight + 4
	laneTop := c.VerdictRow + float64(verdictRows.rows())*verdictLine + 4
	for i := range c.Faults {
		c.Faults[i].Y = c.FaultRow + float64(faultRow[i])*stripHeight
	}
	for i := range c.Oracles {
		c.Oracles[i].Y = c.OracleRow + float64(oracleRow[i])*stripHeight
	}

	// Lanes, one per pod in order of first appearance.
	pods := lanePods(entries)
	bands := timeline.Endpoints(entries).Bands(end)
	laneY := map[string]float64{}
	y := laneTop
	for i, pod := range pods {
		l := laneView{Pod: pod, Label: shortPod(pod), Color: podPalette[i%len(podPalette)], Y: y}
		laneY[pod] = y
		l.Bands = laneBands(sc, pod, bands, y)
		for _, e := range entries {
			if e.Pod != pod {
				continue
			}
			switch {
			case e.Restart != nil:
				r := e.Restart
				title := fmt.Sprintf("%s restart #%d at %s: cause %s", r.Container, r.RestartCount, Offset(e.T), r.Cause)
				if r.Reason != "" {
					title += fmt.Sprintf(" (reason %s, exit %d)", r.Reason, r.ExitCode)
				}
				if r.Evidence != "" {
					title += "; " + r.Evidence
				}
				l.Restarts = append(l.Restarts, pointView{X: sc.x(e.T), Y: y + 16, Label: string(r.Cause), Title: title})
			case e.Probe != nil:
				l.Probes = append(l.Probes, probeTick{X: sc.x(e.T), Y1: y + 1, Y2: y + 9, Class: "probe-" + e.Probe.Probe,
					Title: fmt.Sprintf("%s %s probe failed: %s", Offset(e.T), e.Probe.Probe, e.Probe.Message)})
			}
		}
		c.Lanes = append(c.Lanes, l)
		y += laneHeight
	}
	c.LanesBottom = y

	// Per-second panels.
	wins := loadWindows(entries, reqs)
	y += panelGap
	c.Panels = append(c.Panels, successPanel(sc, wins, y))
	y += panelHeight + panelGap
	c.Panels = append(c.Panels, latencyPanel(sc, wins, y))
	y += panelHeight + panelGap
	c.Panels = append(c.Panels, sharePanel(sc, wins, pods, y))
	y += panelHeight
	c.GridBottom = y
	c.AxisBottom = y + 14
	c.Height = y + bottomAxis

	// Shades through the chart: every fault window; the oracle windows of failed verdicts (and
	// those the runner added), in their pod's lane when they name one, else through everything.
	for _, f := range c.Faults {
		c.Shades = append(c.Shades, rectView{X: f.X, Y: f.Y, W: f.W, H: c.GridBottom - f.Y, Class: "fault-shade", Title: f.Title})
	}
	for i, w := range grouped {
		// A window covering most of the run says nothing about timing: list it, don't shade it.
		if (!w.Failed && !w.Extra) || w.To-w.From > end/2 {
			continue
		}
		o := c.Oracles[i]
		whole := rectView{X: o.X, Y: laneTop, W: o.W, H: c.GridBottom - laneTop, Class: "oracle-shade", Title: o.Title}
		if len(w.Pods) == 0 {
			c.Shades = append(c.Shades, whole)
			continue
		}
		for _, pod := range w.Pods {
			r := whole
			if ly, ok := laneY[pod]; ok {
				r.Y, r.H = ly+8, laneHeight-6
			}
			c.Shades = append(c.Shades, r)
		}
	}
	for _, e := range entries {
		if e.Mark != nil {
			c.Marks = append(c.Marks, markLine{X: sc.x(e.T), Title: fmt.Sprintf("%s %s", Offset(e.T), e.Mark.Name)})
		}
	}
	for i := range c.Verdicts {
		c.Verdicts[i].Top = c.VerdictRow + float64(verdictRow[i])*verdictLine + 2
		c.Verdicts[i].LabelY = c.VerdictRow + float64(verdictRow[i]+1)*verdictLine - 2
		c.Verdicts[i].Bottom = c.GridBottom
	}
	c.Ticks = timeTicks(sc)
	return c
}

func verdictRowID(scenario string, i int) string    { return fmt.Sprintf("%s-v%d", scenario, i) }
func verdictMarkerID(scenario string, i int) string { return fmt.Sprintf("%s-v%d-at", scenario, i) }

// lanePods lists the pods named by endpoint, restart, probe and pod entries, in order of first
// appearance.
func lanePods(entries []timeline.Entry) []string {
	var pods []string
	seen := map[string]bool{}
	for _, e := range entries {
		key := e.Pod
		if key == "" && e.Endpoint != nil {
			key = e.Endpoint.Address
		}
		if key == "" || seen[key] {
			continue
		}
		if e.Endpoint == nil && e.Restart == nil && e.Probe == nil && e.PodChange == nil {
			continue
		}
		seen[key] = true
		pods = append(pods, key)
	}
	return pods
}

// shortPod keeps a pod name's last 26 characters, enough for the hash suffixes.
func shortPod(pod string) string {
	r := []rune(pod)
	if len(r) <= 26 {
		return pod
	}
	return "…" + string(r[len(r)-25:])
}

// laneBands draws the pod's endpoint bands as three thin rows: ready (green, or pale red while
// the endpoint exists but is not ready), serving, terminating. Adjacent stretches with the same
// value merge into one rectangle.
func laneBands(sc scale, pod string, bands []timeline.EndpointBand, y float64) []rectView {
	type row struct {
		class string
		y, h  float64
		on    func(timeline.EndpointState) bool
	}
	rows := []row{
		{"ready", y + 12, 8, func(s timeline.EndpointState) bool { return s.Ready }},
		{"notready", y + 12, 8, func(s timeline.EndpointState) bool { return !s.Ready && !s.Terminating }},
		{"serving", y + 22, 4, func(s timeline.EndpointState) bool { return s.Serving }},
		{"terminating", y + 28, 4, func(s timeline.EndpointState) bool { return s.Terminating }},
	}
	var out []rectView
	for _, r := range rows {
		var cur *timeline.EndpointBand
		flush := func() {
			if cur == nil {
				return
			}
			x0, x1 := sc.x(cur.From), sc.x(cur.To)
			out = append(out, rectView{X: x0, Y: r.y, W: max(x1-x0, 0.6), H: r.h, Class: "band " + r.class,
				Title: fmt.Sprintf("%s %s %s – %s (%s)", pod, r.class, Offset(cur.From), Offset(cur.To), Seconds(cur.To-cur.From))})
			cur = nil
		}
		for _, b := range bands {
			if b.Pod != pod {
				continue
			}
			if !r.on(b.State) {
				flush()
				continue
			}
			if cur != nil && cur.To == b.From {
				cur.To = b.To
				continue
			}
			flush()
			bb := b
			cur = &bb
		}
		flush()
	}
	return out
}

// windowAt is one second of load placed on the timeline.
type windowAt struct {
	T time.Duration
	W timeline.LoadWindow
}

// loadWindows returns the LoadWindow entries, or, when the timeline has none, per-second windows
// binned from the recorded requests.
func loadWindows(entries []timeline.Entry, reqs []timeline.Request) []windowAt {
	var out []windowAt
	for _, e := range entries {
		if e.Load != nil {
			out = append(out, windowAt{T: e.T, W: *e.Load})
		}
	}
	if len(out) > 0 || len(reqs) == 0 {
		return out
	}
	bins := map[int64][]timeline.Request{}
	for _, q := range reqs {
		bins[int64(q.T/time.Second)] = append(bins[int64(q.T/time.Second)], q)
	}
	keys := make([]int64, 0, len(bins))
	for k := range bins {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for i, k := range keys {
		qs := bins[k]
		w := timeline.LoadWindow{Second: i, Sent: len(qs), ByPod: map[string]int{}}
		lat := make([]time.Duration, 0, len(qs))
		for _, q := range qs {
			lat = append(lat, q.Latency)
			if q.OK() {
				w.OK++
				if q.Pod != "" {
					w.ByPod[q.Pod]++
				}
			} else {
				w.Failed++
			}
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		w.P50, w.P99 = quantile(lat, 0.5), quantile(lat, 0.99)
		w.SuccessRatio = float64(w.OK) / float64(len(qs))
		out = append(out, windowAt{T: time.Duration(k) * time.Second, W: w})
	}
	return out
}

func successPanel(sc scale, wins []windowAt, y float64) panelView {
	wins = withRequests(wins)
	p := panelView{Title: "success ratio", Class: "panel-success", Y: y, H: panelHeight, Empty: len(wins) == 0}
	yOf := func(r float64) float64 { return round1(y + panelHeight - r*panelHeight) }
	p.YTicks = []yTick{{yOf(1), "100%"}, {yOf(0.5), "50%"}, {yOf(0), "0%"}}
	p.Points = polyline(sc, wins, func(w timeline.LoadWindow) float64 { return yOf(w.SuccessRatio) })
	for _, w := range wins {
		if w.W.Failed > 0 {
			x0, x1 := sc.x(w.T), sc.x(w.T+time.Second)
			p.Bars = append(p.Bars, rectView{X: x0, Y: yOf(1), W: max(x1-x0, 0.6), H: panelHeight, Class: "failed-second",
				Title: fmt.Sprintf("%s: %d of %d failed %v", Offset(w.T), w.W.Failed, w.W.Sent, w.W.Errors)})
		}
	}
	return p
}

func latencyPanel(sc scale, wins []windowAt, y float64) panelView {
	wins = withRequests(wins)
	p := panelView{Title: "p99 latency", Class: "panel-latency", Y: y, H: panelHeight, Empty: len(wins) == 0}
	var top time.Duration
	for _, w := range wins {
		top = max(top, w.W.P99)
	}
	top = niceDuration(top)
	yOf := func(d time.Duration) float64 {
		return round1(y + panelHeight - float64(d)/float64(top)*panelHeight)
	}
	p.YTicks = []yTick{{yOf(top), Millis(top)}, {yOf(top / 2), Millis(top / 2)}, {yOf(0), "0"}}
	p.Points = polyline(sc, wins, func(w timeline.LoadWindow) float64 { return yOf(w.P99) })
	return p
}

func sharePanel(sc scale, wins []windowAt, pods []string, y float64) panelView {
	p := panelView{Title: "per-pod share", Class: "panel-share", Y: y, H: panelHeight, Empty: len(wins) == 0}
	p.YTicks = []yTick{{y, "100%"}, {y + panelHeight, "0%"}}
	color := map[string]string{}
	for i, pod := range pods {
		color[pod] = podPalette[i%len(podPalette)]
	}
	for _, w := range wins {
		total := 0
		names := make([]string, 0, len(w.W.ByPod))
		for pod, n := range w.W.ByPod {
			total += n
			names = append(names, pod)
		}
		if total == 0 {
			continue
		}
		sort.Slice(names, func(i, j int) bool { return podOrder(pods, names[i]) < podOrder(pods, names[j]) })
		x0, x1 := sc.x(w.T), sc.x(w.T+time.Second)
		base := y + panelHeight
		for _, pod := range names {
			h := float64(w.W.ByPod[pod]) / float64(total) * panelHeight
			c := color[pod]
			if c == "" {
				c = "#999999"
			}
			p.Bars = append(p.Bars, rectView{X: x0, Y: round1(base - h), W: max(x1-x0, 0.6), H: round1(h), Class: "share",
				Fill: c, Title: fmt.Sprintf("%s %s: %d of %d", Offset(w.T), pod, w.W.ByPod[pod], total)})
			base -= h
		}
	}
	return p
}

func podOrder(pods []string, pod string) int {
	for i, p := range pods {
		if p == pod {
			return i
		}
	}
	return len(pods)
}

// withRequests drops seconds in which nothing was sent: they have no ratio or latency to plot.
func withRequests(wins []windowAt) []windowAt {
	out := make([]windowAt, 0, len(wins))
	for _, w := range wins {
		if w.W.Sent > 0 {
			out = append(out, w)
		}
	}
	return out
}

// polyline joins the windows' values at the middle of each second.
func polyline(sc scale, wins []windowAt, yOf func(timeline.LoadWindow) float64) string {
	var b strings.Builder
	for i, w := range wins {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatFloat(sc.x(w.T+time.Second/2), 'f', 1, 64))
		b.WriteByte(',')
		b.WriteString(strconv.FormatFloat(yOf(w.W), 'f', 1, 64))
	}
	return b.String()
}

// niceDuration rounds a latency up to 1, 2 or 5 times a power of ten milliseconds.
func niceDuration(d time.Duration) time.Duration {
	ms := float64(d) / float64(time.Millisecond)
	if ms <= 1 {
		return time.Millisecond
	}
	mag := math.Pow(10, math.Floor(math.Log10(ms)))
	for _, m := range []float64{1, 2, 5, 10} {
		if ms <= m*mag {
			return time.Duration(m * mag * float64(time.Millisecond))
		}
	}
	return d
}

// timeTicks chooses a tick step giving at most 13 labelled ticks.
func timeTicks(sc scale) []axisTick {
	steps := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second,
		30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}
	length := sc.t1 - sc.t0
	step := steps[len(steps)-1]
	for _, s := range steps {
		if length/s <= 12 {
			step = s
			break
		}
	}
	var out []axisTick
	for t := time.Duration(0); t <= sc.t1; t += step {
		out = append(out, axisTick{X: sc.x(t), Label: clock(t)})
	}
	return out
}

// clock formats an offset as m:ss.
func clock(d time.Duration) string {
	s := int(d / time.Second)
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// statusClass is the CSS class of a verdict status.
func statusClass(s verdict.Status) string {
	return "status-" + strings.ReplaceAll(strings.ToLower(string(s)), " ", "-")
}
