package reports_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/reports/reportstest"
)

var sampleScreenshot = flag.String("sample-screenshot", "", "also save the rendered sample report's screenshot at this path (docs/report-screenshot.png)")

const chromiumPath = "/usr/bin/chromium"

// chromium runs headless Chromium with everything that could reach the network switched off.
func chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-extensions", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, chromiumPath, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

// TestIntegrationHTMLInChromium renders the sample report.html in headless Chromium, as a person
// would open it, and checks the screenshot shows a drawn page and the DOM Chromium built holds
// the pod lanes, the fault window and the verdict anchors.
func TestIntegrationHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: skipped under -short")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("%s not installed (apt-get install chromium): %v", chromiumPath, err)
	}
	dir := t.TempDir()
	// A 3-pod, 2-minute run with a database fault, judged by the real verdict rules.
	sc := reportstest.DBSlowLiveness(50)
	var specs []verdict.Spec
	for _, rule := range []string{"no-liveness-restarts", "min-ready-endpoints", "readiness-withdrawn-in-window",
		"recovery-within", "failed-requests-budget", "no-traffic-after-withdrawal"} {
		specs = append(specs, verdict.Spec{Rule: rule})
	}
	if err := reportstest.Judge(&sc, specs...); err != nil {
		t.Fatal(err)
	}
	var anchors []string
	for i, v := range sc.Verdicts {
		if v.Status == verdict.Fail && v.At != nil {
			anchors = append(anchors, fmt.Sprintf(`id="s0-v%d-at"`, i), fmt.Sprintf(`href="#s0-v%d-at"`, i))
		}
	}
	if len(anchors) == 0 {
		t.Fatal("the sample run has no failed verdict with a moment: nothing to link")
	}
	r := &reports.Report{
		SchemaVersion: reports.SchemaVersion, ProbegateVersion: "v0.1.0-sample", KubernetesVersion: "v1.34.4",
		Cluster: "probegate", Started: reportstest.Start, Finished: reportstest.Start.Add(130 * time.Second),
		Scenarios: []reports.ScenarioReport{sc},
	}
	if err := reports.WriteAll(dir, r); err != nil {
		t.Fatal(err)
	}
	page := "file://" + filepath.Join(dir, reports.HTMLFile)
	shot := filepath.Join(dir, "shot.png")
	chromium(t, "--screenshot="+shot, "--window-size=1400,1000", page)

	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	b := img.Bounds()
	colours := map[[3]uint32]bool{}
	nonWhite, total := 0, 0
	reds, greens := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			colours[[3]uint32{r, g, bl}] = true
			total++
			if r < 245 || g < 245 || bl < 245 {
				nonWhite++
			}
			if r > 170 && g < 80 && bl < 80 {
				reds++ // FAIL badges, restart markers, failure markers
			}
			if g > 130 && r < 80 && bl < 120 {
				greens++ // ready bands, PASS badges
			}
		}
	}
	t.Logf("screenshot %dx%d: %d colours, %.1f%% non-white, %d red and %d green pixels",
		b.Dx(), b.Dy(), len(colours), 100*float64(nonWhite)/float64(total), reds, greens)
	if b.Dx() != 1400 || b.Dy() != 1000 {
		t.Errorf("screenshot is %dx%d, want 1400x1000", b.Dx(), b.Dy())
	}
	if len(colours) < 50 {
		t.Errorf("only %d distinct colours: the page looks blank", len(colours))
	}
	if frac := float64(nonWhite) / float64(total); frac < 0.05 {
		t.Errorf("only %.1f%% of pixels are not white: the page looks blank", 100*frac)
	}
	if reds < 200 || greens < 2000 {
		t.Errorf("too few red (%d) or green (%d) pixels: the verdicts and bands are not drawn", reds, greens)
	}

	domText := string(chromium(t, "--dump-dom", page))
	for _, want := range append([]string{
		`data-pod="` + reportstest.PodA + `"`, `data-pod="` + reportstest.PodB + `"`, `data-pod="` + reportstest.PodC + `"`,
		`class="fault-window"`, `class="fault-shade"`, `class="oracle-window`, `id="s0-timeline"`,
		"1 scenario: 0 passed, 1 failed",
	}, anchors...) {
		if !strings.Contains(domText, want) {
			t.Errorf("DOM Chromium built lacks %s", want)
		}
	}
	if n := strings.Count(domText, `class="lane"`); n != 3 {
		t.Errorf("DOM has %d pod lanes, want 3", n)
	}

	if *sampleScreenshot != "" {
		tall := filepath.Join(dir, "sample.png")
		chromium(t, "--screenshot="+tall, "--window-size=1400,1150", page)
		data, err := os.ReadFile(tall)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*sampleScreenshot, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("sample screenshot saved at %s", *sampleScreenshot)
	}
}
