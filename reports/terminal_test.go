package reports_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/reports"
	"github.com/probegate/probegate/reports/reportstest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test ./reports -run %s -update): %v", t.Name(), err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestTerminalSummaryGolden(t *testing.T) {
	r := reportstest.SampleReport(50)
	var plain, color bytes.Buffer
	if err := reports.WriteTerminal(&plain, r, false); err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteTerminal(&color, r, true); err != nil {
		t.Fatal(err)
	}
	golden(t, "terminal.golden", plain.Bytes())
	golden(t, "terminal-color.golden", color.Bytes())
	if bytes.Contains(plain.Bytes(), []byte("\x1b[")) {
		t.Error("plain output contains escape codes")
	}
	if !bytes.Contains(color.Bytes(), []byte("\x1b[31mFAIL")) {
		t.Error("coloured output does not paint FAIL red")
	}
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	if last := lines[len(lines)-1]; last != "2 scenarios: 1 passed, 1 failed" {
		t.Errorf("final line = %q", last)
	}
}

func TestFinalLine(t *testing.T) {
	cases := map[string]reports.Counts{
		"12 scenarios: 11 passed, 1 failed":                          {Scenarios: 12, Passed: 11, Failed: 1},
		"1 scenario: 1 passed, 0 failed":                             {Scenarios: 1, Passed: 1},
		"3 scenarios: 1 passed, 0 failed, 1 errored, 1 inconclusive": {Scenarios: 3, Passed: 1, Errored: 1, Inconclusive: 1},
		"16 scenarios: 10 passed, 0 failed, 6 not applicable":        {Scenarios: 16, Passed: 10, NotApplicable: 6},
	}
	for want, c := range cases {
		if got := reports.FinalLine(c); got != want {
			t.Errorf("FinalLine(%+v) = %q, want %q", c, got, want)
		}
	}
}

func TestColorOnlyOnATerminal(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	if reports.ColorFor(pw) {
		t.Error("colour chosen for a pipe")
	}
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal to test with: %v", err)
	}
	defer tty.Close()
	if !reports.ColorFor(tty) {
		t.Error("no colour for a terminal")
	}
	t.Setenv("NO_COLOR", "1")
	if reports.ColorFor(tty) {
		t.Error("colour chosen although NO_COLOR is set")
	}
}

func TestTerminalShowsTheScenariosTolerances(t *testing.T) {
	r := reportstest.SampleReport(50)
	v := &r.Scenarios[0].Verdicts[0]
	v.Tolerances = []string{"grace=2s: a survivor can blip on a loaded node", "tolerance=1s (rule default): slack"}
	var out bytes.Buffer
	if err := reports.WriteTerminal(&out, r, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "tolerance grace=2s: a survivor can blip on a loaded node\n") {
		t.Errorf("the scenario's tolerance is not shown:\n%s", out.String())
	}
	if strings.Contains(out.String(), "rule default") {
		t.Errorf("rule defaults belong in report.html, not the terminal:\n%s", out.String())
	}
}

func TestTerminalShowsACaveat(t *testing.T) {
	r := reportstest.SampleReport(50)
	v := &r.Scenarios[0].Verdicts[0]
	v.Caveats = []string{"the host was starved for CPU at 20s–30s"}
	var out bytes.Buffer
	if err := reports.WriteTerminal(&out, r, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "caveat: the host was starved for CPU at 20s–30s\n") {
		t.Errorf("the caveat is not shown:\n%s", out.String())
	}
}

func TestTerminalShowsACappedAppLag(t *testing.T) {
	r := reportstest.SampleReport(50)
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", ReadinessProbe: &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 1, TimeoutSeconds: 1, FailureThreshold: 2, SuccessThreshold: 1}}}}
	for _, tc := range []struct {
		lag, says string
		shown     bool
	}{{"2100ms", "2.1s", true}, {"800ms", "800ms", false}} {
		o, err := oracle.Compute(spec, map[string]string{oracle.AnnotationReadinessLag: tc.lag}, oracle.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r.Scenarios[0].Oracle = &o
		var out bytes.Buffer
		if err := reports.WriteTerminal(&out, r, false); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "assumption: readiness app lag "+tc.says); got != tc.shown {
			t.Errorf("lag %s: assumption shown = %v, want %v (only a capped one is):\n%s", tc.lag, got, tc.shown, out.String())
		}
	}
}

func TestTerminalShowsWhyNotApplicable(t *testing.T) {
	r := notApplicableSample()
	var b strings.Builder
	if err := reports.WriteTerminal(&b, r, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "NOT APPLICABLE  pod-delete") || !strings.Contains(out, "not run: target web declares no dependency") ||
		!strings.HasSuffix(strings.TrimSpace(out), "2 scenarios: 0 passed, 1 failed, 1 not applicable") {
		t.Errorf("terminal:\n%s", out)
	}
}
