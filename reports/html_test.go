package reports_test

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/reports/reportstest"
)

// dom is a parsed report.html with small query helpers.
type dom struct{ root *html.Node }

func renderDOM(t *testing.T, r *reports.Report) (dom, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := reports.WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	root, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("report.html does not parse: %v", err)
	}
	return dom{root}, buf.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

// all returns the element nodes under n (inclusive) for which match is true.
func all(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func byTag(tag string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == tag }
}

func byClass(tag, class string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == tag && hasClass(n, class) }
}

func (d dom) id(t *testing.T, id string) *html.Node {
	t.Helper()
	found := all(d.root, func(n *html.Node) bool { return attr(n, "id") == id })
	if len(found) != 1 {
		t.Fatalf("want exactly one element with id %q, found %d", id, len(found))
	}
	return found[0]
}

func num(t *testing.T, n *html.Node, key string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(attr(n, key), 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", n.Data, key, attr(n, key), err)
	}
	return v
}

func text(n *html.Node) string {
	var b strings.Builder
	for _, t := range all(n, func(*html.Node) bool { return true }) {
		for c := t.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
	}
	return b.String()
}

// axis reads the x of the "0:00" tick label and of the next tick: the chart's origin and scale.
func axis(t *testing.T, svg *html.Node) (x0, perSecond float64) {
	t.Helper()
	var zero, next, nextSec float64
	haveZero := false
	for _, n := range all(svg, byTag("text")) {
		if n.Parent == nil || !hasClass(n.Parent, "axis") {
			continue
		}
		var m, sec int
		if _, err := fmt.Sscanf(text(n), "%d:%d", &m, &sec); err != nil {
			t.Fatalf("axis label %q: %v", text(n), err)
		}
		at := float64(60*m + sec)
		switch {
		case at == 0:
			zero, haveZero = num(t, n, "x"), true
		case nextSec == 0 || at < nextSec:
			next, nextSec = num(t, n, "x"), at
		}
	}
	if !haveZero || nextSec == 0 {
		t.Fatal("axis ticks 0:00 and a second tick not found")
	}
	return zero, (next - zero) / nextSec
}

func near(got, want float64) bool { return math.Abs(got-want) <= 0.6 }

func TestHTMLIsSelfContained(t *testing.T) {
	d, raw := renderDOM(t, reportstest.SampleReport(10))
	for _, tag := range []string{"script", "link", "img", "iframe", "object", "embed", "image", "use"} {
		if n := all(d.root, byTag(tag)); len(n) > 0 {
			t.Errorf("report.html has <%s>: it must not load anything", tag)
		}
	}
	for _, n := range all(d.root, func(*html.Node) bool { return true }) {
		if src := attr(n, "src"); src != "" {
			t.Errorf("<%s src=%q>", n.Data, src)
		}
		href := attr(n, "href")
		if strings.Contains(href, "://") || strings.HasPrefix(href, "//") {
			t.Errorf("<%s href=%q> points off the page", n.Data, href)
		}
	}
	for _, bad := range []string{"url(", "@import", "@font-face"} {
		if strings.Contains(raw, bad) {
			t.Errorf("report.html contains %q", bad)
		}
	}
}

func TestHTMLTimelineLanesAndBands(t *testing.T) {
	d, _ := renderDOM(t, reportstest.SampleReport(10))
	svg := d.id(t, "s1-timeline") // pod-delete
	lanes := all(svg, byClass("g", "lane"))
	var pods []string
	for _, l := range lanes {
		pods = append(pods, attr(l, "data-pod"))
	}
	want := []string{reportstest.PodA, reportstest.PodB, reportstest.PodC, reportstest.PodD}
	if strings.Join(pods, ",") != strings.Join(want, ",") {
		t.Fatalf("lanes = %v, want %v", pods, want)
	}
	x0, pps := axis(t, svg)
	// PodB: ready 1.8–40.8 s, serving (while draining) until 46.2 s, terminating 40.8–46.7 s.
	laneB := lanes[1]
	check := func(class string, from, to float64) {
		t.Helper()
		for _, r := range all(laneB, byClass("rect", class)) {
			if near(num(t, r, "x"), x0+from*pps) {
				if w := num(t, r, "width"); !near(w, (to-from)*pps) {
					t.Errorf("%s band from %.1f s: width %.1f, want %.1f", class, from, w, (to-from)*pps)
				}
				return
			}
		}
		t.Errorf("no %s band starting at %.1f s (x %.1f) in PodB's lane", class, from, x0+from*pps)
	}
	check("ready", 1.8, 40.8)
	check("serving", 1.8, 46.2)
	check("terminating", 40.8, 46.7)
	check("notready", 0.3, 1.8)
	if n := all(laneB, byClass("rect", "ready")); len(n) != 1 {
		t.Errorf("PodB has %d ready bands, want 1", len(n))
	}
	// The replacement only appears at 41 s.
	for _, r := range all(lanes[3], byClass("rect", "band")) {
		if num(t, r, "x") < x0+40.9*pps {
			t.Errorf("PodD band starts at x %.1f, before it existed", num(t, r, "x"))
		}
	}

	faults := all(svg, byClass("g", "fault-window"))
	if len(faults) != 1 {
		t.Fatalf("fault windows = %d, want 1", len(faults))
	}
	bar := all(faults[0], byClass("rect", "fault-bar"))[0]
	if !near(num(t, bar, "x"), x0+40*pps) || !near(num(t, bar, "width"), 6.7*pps) {
		t.Errorf("fault bar x %.1f width %.1f, want %.1f and %.1f", num(t, bar, "x"), num(t, bar, "width"), x0+40*pps, 6.7*pps)
	}
	if shades := all(svg, byClass("rect", "fault-shade")); len(shades) != 1 {
		t.Errorf("fault shades = %d, want 1", len(shades))
	}
	if o := all(svg, byClass("g", "oracle-window")); len(o) != 1 || !strings.Contains(text(o[0]), "withdraw before drain ends") {
		t.Errorf("oracle windows = %d", len(o))
	}
}

func TestHTMLRestartsProbesAndPanels(t *testing.T) {
	sample := reportstest.SampleReport(10)
	d, _ := renderDOM(t, sample)
	svg := d.id(t, "s0-timeline") // db-slow
	restarts := all(svg, byClass("g", "restart"))
	if len(restarts) != 6 {
		t.Fatalf("restart markers = %d, want 6", len(restarts))
	}
	for _, r := range restarts {
		if !strings.Contains(text(r), "cause liveness") {
			t.Errorf("restart marker lacks its cause: %q", text(r))
		}
	}
	if p := all(svg, byClass("line", "probe-liveness")); len(p) != 12 {
		t.Errorf("liveness probe ticks = %d, want 12", len(p))
	}
	if p := all(svg, byClass("line", "probe-readiness")); len(p) != 6 {
		t.Errorf("readiness probe ticks = %d, want 6", len(p))
	}
	// One point per second of load (5 s → 125 s).
	for _, class := range []string{"panel-success", "panel-latency"} {
		panel := all(svg, byClass("g", class))
		if len(panel) != 1 {
			t.Fatalf("%s panels = %d", class, len(panel))
		}
		lines := all(panel[0], byTag("polyline"))
		if len(lines) != 1 || len(strings.Fields(attr(lines[0], "points"))) != 120 {
			t.Errorf("%s: want one polyline with 120 points", class)
		}
	}
	share := all(svg, byClass("g", "panel-share"))[0]
	if bars := all(share, byClass("rect", "share")); len(bars) < 3*80 {
		t.Errorf("share bars = %d, want one per pod for each second with traffic", len(bars))
	}
	x0, pps := axis(t, svg)
	// The success ratio falls to 0 while no endpoint is ready (45.4 s – 83 s).
	pts := strings.Fields(attr(all(all(svg, byClass("g", "panel-success"))[0], byTag("polyline"))[0], "points"))
	bottom := 0.0
	for _, p := range pts {
		xy := strings.Split(p, ",")
		x, _ := strconv.ParseFloat(xy[0], 64)
		y, _ := strconv.ParseFloat(xy[1], 64)
		if near(x, x0+60.5*pps) {
			bottom = y
		}
		if near(x, x0+20.5*pps) && y >= bottom && bottom != 0 {
			t.Error("success ratio at 20 s is not above the ratio at 60 s")
		}
	}
	if bottom == 0 {
		t.Error("no success-ratio point at 60.5 s")
	}
}

func TestHTMLFailedVerdictsLinkToTheirMoment(t *testing.T) {
	sample := reportstest.SampleReport(10)
	d, _ := renderDOM(t, sample)
	svg := d.id(t, "s0-timeline")
	x0, pps := axis(t, svg)
	for i, v := range sample.Scenarios[0].Verdicts {
		row := d.id(t, "s0-v"+strconv.Itoa(i))
		if b := all(row, byClass("span", "badge")); len(b) != 1 || !hasClass(b[0], "status-"+strings.ToLower(string(v.Status))) {
			t.Errorf("verdict %s: badge not coloured by its own status %s", v.Rule, v.Status)
		}
		links := all(row, byClass("a", "verdict-link"))
		if v.At == nil || v.Status != verdict.Fail {
			if len(links) != 0 {
				t.Errorf("verdict %s (%s) links to a moment: only failures with one do", v.Rule, v.Status)
			}
			continue
		}
		if len(links) != 1 || attr(links[0], "href") != "#s0-v"+strconv.Itoa(i)+"-at" {
			t.Fatalf("verdict %s: row does not link to its marker", v.Rule)
		}
		marker := d.id(t, "s0-v"+strconv.Itoa(i)+"-at")
		if marker.Parent.Data != "a" || attr(marker.Parent, "href") != "#s0-v"+strconv.Itoa(i) {
			t.Errorf("marker of %s does not link back to its row", v.Rule)
		}
		line := all(marker, byTag("line"))[0]
		if want := x0 + v.At.Seconds()*pps; !near(num(t, line, "x1"), want) {
			t.Errorf("marker of %s at x %.1f, want %.1f", v.Rule, num(t, line, "x1"), want)
		}
		if !hasClass(marker, "verdict-fail") {
			t.Errorf("marker of failed %s is not drawn as a failure", v.Rule)
		}
	}
	final := d.id(t, "final-line")
	if text(final) != "2 scenarios: 1 passed, 1 failed" {
		t.Errorf("final line = %q", text(final))
	}
}

func TestHTMLWithoutTimeline(t *testing.T) {
	r := reportstest.SampleReport(5)
	r.Scenarios[0].Timeline, r.Scenarios[0].Requests = nil, nil
	d, raw := renderDOM(t, r)
	svg := d.id(t, "s0-timeline")
	if len(all(svg, byClass("g", "lane"))) != 0 || !strings.Contains(raw, "no timeline recorded") {
		t.Error("a scenario without data should draw no lanes and say so")
	}
}

func TestHTMLShadesFailedVerdictWindows(t *testing.T) {
	r := reportstest.SampleReport(5)
	sc := &r.Scenarios[1] // pod-delete
	at := 44 * s
	// A failed verdict with a window for PodC only, and a passing one with a target-wide window.
	sc.Verdicts = append(sc.Verdicts,
		verdict.Result{Rule: "late-withdrawal", Status: verdict.Fail, At: &at, Expected: "x", Observed: "y",
			Windows: []verdict.Window{{Name: "withdrawal", Pod: reportstest.PodC, From: 41 * s, To: 43 * s}}},
		verdict.Result{Rule: "calm", Status: verdict.Pass,
			Windows: []verdict.Window{{Name: "calm window", From: 10 * s, To: 20 * s}}})
	d, _ := renderDOM(t, r)
	svg := d.id(t, "s1-timeline")
	x0, pps := axis(t, svg)
	var laneC *html.Node
	for _, l := range all(svg, byClass("g", "lane")) {
		if attr(l, "data-pod") == reportstest.PodC {
			laneC = l
		}
	}
	laneTop := num(t, all(laneC, byClass("rect", "lane-bg"))[0], "y")
	var shaded []*html.Node
	for _, r := range all(svg, byClass("rect", "oracle-shade")) {
		shaded = append(shaded, r)
	}
	// The sample's passing deleted-pod-withdrawn window and the calm window are not shaded.
	if len(shaded) != 1 {
		t.Fatalf("oracle shades = %d, want only the failed verdict's", len(shaded))
	}
	sh := shaded[0]
	if !near(num(t, sh, "x"), x0+41*pps) || !near(num(t, sh, "width"), 2*pps) {
		t.Errorf("shade x %.1f width %.1f, want %.1f, %.1f", num(t, sh, "x"), num(t, sh, "width"), x0+41*pps, 2*pps)
	}
	if y := num(t, sh, "y"); y < laneTop-5 || y+num(t, sh, "height") > laneTop+36 {
		t.Errorf("shade y %.1f–%.1f is not within PodC's lane at %.1f", y, y+num(t, sh, "height"), laneTop)
	}
	bars := all(svg, byClass("g", "oracle-window"))
	if len(bars) != 3 {
		t.Errorf("oracle window bars = %d, want all 3 listed in the strip", len(bars))
	}
	failed := 0
	for _, b := range bars {
		if hasClass(b, "failed") {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d bars marked failed, want 1", failed)
	}
}

// A 3-pod, 10-minute run must stay readable: minute ticks, and a 2-second dip still visible.
func TestHTMLTenMinutesStaysReadable(t *testing.T) {
	sc := reportstest.TenMinutes(10)
	r := &reports.Report{SchemaVersion: reports.SchemaVersion, Scenarios: []reports.ScenarioReport{sc}}
	d, _ := renderDOM(t, r)
	svg := d.id(t, "s0-timeline")
	var ticks []string
	for _, n := range all(svg, byTag("text")) {
		if n.Parent != nil && hasClass(n.Parent, "axis") {
			ticks = append(ticks, text(n))
		}
	}
	// Top and bottom axis: 0:00 … 10:00 every minute.
	if len(ticks) != 22 || ticks[2] != "1:00" || ticks[20] != "10:00" {
		t.Errorf("axis ticks = %v, want every minute", ticks)
	}
	if lanes := all(svg, byClass("g", "lane")); len(lanes) != 3 {
		t.Fatalf("lanes = %d", len(lanes))
	}
	if w := num(t, svg, "width"); w > 1400 {
		t.Errorf("chart is %.0f px wide: it must fit a laptop screen", w)
	}
	x0, pps := axis(t, svg)
	dips := 0
	for _, band := range all(svg, byClass("rect", "notready")) {
		if w := num(t, band, "width"); w < 3 {
			t.Errorf("a not-ready band is %.1f px wide: too thin to see", w)
		} else if num(t, band, "x") > x0+50*pps && near(w, 2*pps) {
			dips++ // the 2 s dips during the faults
		}
	}
	if dips != 5 {
		t.Errorf("visible 2 s dips = %d, want 5", dips)
	}
	if n := len(all(svg, byClass("g", "restart"))); n != 5 {
		t.Errorf("restart markers = %d, want 5", n)
	}
	if n := len(all(svg, byClass("g", "fault-window"))); n != 5 {
		t.Errorf("fault windows = %d, want 5", n)
	}
}

func TestHTMLEscapesRecordedText(t *testing.T) {
	r := reportstest.SampleReport(2)
	r.Scenarios[0].Name = `<script>alert("name")</script>`
	r.Scenarios[0].Verdicts[0].Observed = `<img src=x onerror=alert(1)>`
	d, _ := renderDOM(t, r)
	if n := all(d.root, byTag("script")); len(n) > 0 {
		t.Error("a scenario name became a <script> element")
	}
	if n := all(d.root, byTag("img")); len(n) > 0 {
		t.Error("a verdict's observed text became an <img> element")
	}
	if !strings.Contains(text(d.id(t, "s0-v0")), `<img src=x onerror=alert(1)>`) {
		t.Error("the observed text is not shown as text")
	}
}
