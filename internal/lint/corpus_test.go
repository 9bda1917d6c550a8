package lint

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/benchfig"
)

// The real-world corpus (testdata/real/): install manifests of public projects, fetched at test time
// through the Go module cache and never committed, and a label per finding at warning or error.
const (
	corpusList   = "testdata/real/corpus.txt"
	corpusLabels = "testdata/real/labels.txt"

	// corpusPrecisionGoal is the bar for gating CI: true positives among warnings and errors.
	corpusPrecisionGoal = 0.9
	// corpusMinPrecision is what lint reaches on the labelled corpus: the test holds it as a ratchet
	// (it may only go up while the corpus stays the same) and the bench figure shows it against the
	// goal. History: 69 of 93 when first labelled; 67 of 82 when PG003 and PG007 began reading the
	// manifest's evidence; 66 of 79 when PG009 began reading the protocol a route carries; 68 of 81
	// once a kustomization directory was built before it was linted; 67 of 78 when PG003 left a
	// liveness that runs readiness's check to PG001 (one finding per root cause); 70 of 85 when six
	// installs were added (every one the module proxy here served: contour ×2, VPA,
	// external-snapshotter, kwok, envoy-gateway's quickstart) — they brought 4 false positives lint
	// cannot see (a scrape-only Service on a port named http, a shared health check that always
	// answers ok); 70 of 82 when PG009 read a grace period above a minute with no preStop hook as
	// an in-process drain (knative's activator and webhook, calico-typha); 70 of 81 when PG001 became
	// info where a startupProbe guards the start, liveness already waits past readiness's worst
	// withdrawal and nothing names the shared check deep (kwok's /healthz); 70 of 79 when PG003 stopped
	// counting state on an emptyDir, which only a restart in place loads, unless liveness runs
	// readiness's check (argo-cd's redis-ha, istio's Prometheus); 70 of 78 when a check both probes
	// run, named for liveness, stopped counting as readiness's (redis-ha's sentinel_liveness.sh);
	// 78 of 87 when eight entries were added (every install, quickstart or example manifest in the
	// modules the local module cache held: the ALB ingress controller and its 2048, echoserver and
	// external-dns examples, external-dns, velero's MinIO and nginx examples, dex's example) — 8 true
	// positives and a false one (a readiness gate on MinIO's lone Recreate pod); 78 of 86 when PG014
	// became info on a pod that never has another beside it (one replica, Recreate or StatefulSet).
	// 78 of 84 when PG002, PG007, PG009 and PG014 became info on a container only headless Services
	// reach (prometheus-operator's scrape Service); 79 of 84 when VPA's PG001 was relabelled TP (its
	// shared check is shallow, but the finding restates PG002 and liveness fires before readiness's
	// worst withdrawal; labels.txt says why). The 5 false positives left rest on what only the
	// application shows: podinfo's 3 s in-app delay (×3) and kwok's scrape-only Service on a port
	// named http (×2); labels.txt gives each one's reason. 79 of 86 when a workload with no Service
	// in view began to be judged as if one routed to its ports (issue 30): descheduler's install
	// ships no Service, and its one unnamed port, probed by liveness, carries only health checks and
	// metrics, which the manifest cannot tell from the serving port of istio's liveness-http sample.
	corpusMinPrecision = 0.918
	// corpusMinRecall is the share of labelled problems (true positives and known misses) lint
	// found when the corpus was labelled; it may only go up.
	corpusMinRecall = 1.0
)

// corpusEntry is one install: a module version and the paths inside it, linted together.
type corpusEntry struct {
	Name    string
	Module  string // module@version
	Paths   []string
	Line    int
	modRoot string
}

// corpusLabel says whether one finding is a real problem. Verdict is TP (an expert would ask for the
// fix), FP (lint is wrong) or MISS (a real problem lint does not report; counted against recall).
type corpusLabel struct {
	Key     string
	Verdict string
	Reason  string
}

func readCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	data, err := os.ReadFile(corpusList)
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusEntry
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 || !strings.Contains(f[1], "@") {
			t.Fatalf("%s:%d: want NAME MODULE@VERSION PATH..., got %q", corpusList, i+1, line)
		}
		out = append(out, corpusEntry{Name: f[0], Module: f[1], Paths: f[2:], Line: i + 1})
	}
	return out
}

// readLabels parses labels.txt: "ENTRY RULE OBJECT CONTAINER PROBE VERDICT reason…", "-" for an
// empty container or probe.
func readLabels(t testing.TB) map[string]corpusLabel {
	t.Helper()
	data, err := os.ReadFile(corpusLabels)
	if err != nil {
		if os.IsNotExist(err) {
			return map[string]corpusLabel{}
		}
		t.Fatal(err)
	}
	out := map[string]corpusLabel{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 7 {
			t.Fatalf("%s:%d: want ENTRY RULE OBJECT CONTAINER PROBE TP|FP|MISS reason, got %q", corpusLabels, i+1, line)
		}
		key := strings.Join(f[:5], " ")
		switch f[5] {
		case "TP", "FP", "MISS":
		default:
			t.Fatalf("%s:%d: verdict %q is not TP, FP or MISS", corpusLabels, i+1, f[5])
		}
		if _, dup := out[key]; dup {
			t.Fatalf("%s:%d: %s labelled twice", corpusLabels, i+1, key)
		}
		out[key] = corpusLabel{Key: key, Verdict: f[5], Reason: strings.Join(f[6:], " ")}
	}
	return out
}

// labelKey names a finding in labels.txt.
func labelKey(entry string, f Finding) string {
	obj := f.Object
	if f.Namespace != "" {
		obj = f.Namespace + "/" + obj
	}
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	return strings.Join([]string{entry, f.RuleID, obj, dash(f.Container), dash(f.Probe)}, " ")
}

// offlineEnv, set to 1, says the Go module proxy cannot be reached: the tests that download real
// manifests and the SARIF schema through the module cache then skip. Unset, a module that cannot
// be downloaded fails them: `make test` runs where the proxy is reachable, and a skip there would
// hide that they never ran.
const offlineEnv = "PROBEGATE_OFFLINE"

// moduleUnavailable reports a module tb could not download: a failure, or a skip with
// PROBEGATE_OFFLINE=1.
func moduleUnavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if os.Getenv(offlineEnv) == "1" {
		tb.Skipf(format+" (skipped: "+offlineEnv+"=1)", args...)
		return
	}
	tb.Fatalf(format+"; set "+offlineEnv+"=1 to skip where the Go module proxy cannot be reached", args...)
}

// downloadModule returns the directory of mod (module@version) in the Go module cache, downloading
// it when needed. It runs outside this module, so go.mod and go.sum are never touched.
func downloadModule(mod, workDir string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", mod)
	cmd.Dir = workDir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res struct{ Path, Version, Dir, Zip, Sum, Error string }
	if jerr := json.Unmarshal(out, &res); res.Error != "" {
		// The go command refuses to extract a module that needs a newer Go than this one, though it
		// has downloaded and checked the zip (Sum is set): only its manifests are read, so unpack it.
		if res.Zip != "" && res.Sum != "" {
			return unzipModule(res.Zip, filepath.Join(workDir, "unzipped"), res.Path+"@"+res.Version)
		}
		return "", errors.New(res.Error)
	} else if err != nil || jerr != nil || res.Dir == "" {
		return "", fmt.Errorf("go mod download: %v %v %s", err, jerr, strings.TrimSpace(stderr.String()))
	}
	return res.Dir, nil
}

// unzipModule extracts a module zip (checked by the go command) under dest and returns the module's
// root there: a module zip holds every file under "module@version/".
func unzipModule(zipPath, dest, prefix string) (string, error) {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return "", fmt.Errorf("open module zip: %w", err)
	}
	defer zr.Close()
	root := filepath.Join(dest, filepath.FromSlash(prefix))
	for _, f := range zr.File {
		rel, ok := strings.CutPrefix(f.Name, prefix+"/")
		if !ok || !filepath.IsLocal(filepath.FromSlash(rel)) || strings.HasSuffix(f.Name, "/") {
			continue
		}
		if err := unzipFile(f, filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			return "", err
		}
	}
	return root, nil
}

func unzipFile(f *zip.File, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	in, err := f.Open()
	if err != nil {
		return fmt.Errorf("read %s from the module zip: %w", f.Name, err)
	}
	defer in.Close()
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("extract %s: %w", f.Name, err)
	}
	return out.Close()
}

// lintEntry lints one corpus entry from the module cache, as `probegate lint` with default settings
// would, and returns the report and the bytes read.
func lintEntry(tb testing.TB, e corpusEntry) (*Report, int64) {
	tb.Helper()
	var paths []string
	var size int64
	for _, p := range e.Paths {
		full := filepath.Join(e.modRoot, filepath.FromSlash(p))
		err := filepath.Walk(full, func(_ string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				size += info.Size()
			}
			return err
		})
		if err != nil {
			tb.Fatalf("%s:%d: %s: %v", corpusList, e.Line, e.Name, err)
		}
		paths = append(paths, full)
	}
	inv, err := LoadPaths(paths, nil)
	if err != nil {
		tb.Fatalf("%s: %v", e.Name, err)
	}
	return NewReport(inv, Config{}, Warning), size
}

// lintApart lints the entry as a repository that keeps each object in its own file, linted one file
// at a time (what CI does with the one file a change touched): every workload alone, with no Service
// in view. The findings of all those runs make one report.
func lintApart(tb testing.TB, e corpusEntry) *Report {
	tb.Helper()
	var paths []string
	for _, p := range e.Paths {
		paths = append(paths, filepath.Join(e.modRoot, filepath.FromSlash(p)))
	}
	inv, err := LoadPaths(paths, nil)
	if err != nil {
		tb.Fatalf("%s: %v", e.Name, err)
	}
	out := &Report{FailOn: Warning}
	for _, w := range inv.Workloads {
		rep := NewReport(&Inventory{Workloads: []*Workload{w}}, Config{}, Warning)
		out.Findings = append(out.Findings, rep.Findings...)
		out.Suppressed = append(out.Suppressed, rep.Suppressed...)
		out.Workloads++
	}
	return out
}

// corpusScore is the outcome of comparing the findings with the labels.
type corpusScore struct {
	TP, FP, Misses, Labelled int
	Unlabelled, Stale        []string
}

func (s corpusScore) precision() float64 {
	if s.TP+s.FP == 0 {
		return 1
	}
	return float64(s.TP) / float64(s.TP+s.FP)
}

func (s corpusScore) recall() float64 {
	if s.Labelled == 0 {
		return 1
	}
	return float64(s.TP) / float64(s.Labelled)
}

// score compares the warnings and errors of the linted entries with the labels. Labels of entries
// that were not linted (their module could not be had) are left out.
func score(labels map[string]corpusLabel, linted map[string]*Report) corpusScore {
	var s corpusScore
	found := map[string]bool{}
	var keys []string
	for entry, rep := range linted {
		for _, f := range rep.Findings {
			if f.Severity < Warning {
				continue
			}
			k := labelKey(entry, f)
			if found[k] {
				continue // one label per key, however many findings share it
			}
			found[k] = true
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		l, ok := labels[k]
		switch {
		case !ok:
			s.Unlabelled = append(s.Unlabelled, k)
		case l.Verdict == "TP":
			s.TP++
		case l.Verdict == "FP":
			s.FP++
		case l.Verdict == "MISS":
			s.Stale = append(s.Stale, k+" is labelled MISS but found: relabel TP")
		}
	}
	for k, l := range labels {
		entry, _, _ := strings.Cut(k, " ")
		if linted[entry] == nil {
			continue
		}
		switch {
		case l.Verdict == "TP" || l.Verdict == "MISS":
			s.Labelled++
			if l.Verdict == "MISS" {
				s.Misses++
			}
		case l.Verdict == "FP" && !found[k]:
			s.Stale = append(s.Stale, k+" (FP) is no longer reported: remove the label")
		}
	}
	sort.Strings(s.Stale)
	return s
}

// lintCorpus fetches and lints every entry whose module can be had; the others are logged (skipped,
// under a test) and left out of the figures.
func lintCorpus(tb testing.TB) (linted, apart map[string]*Report, size int64, took time.Duration) {
	tb.Helper()
	roots := map[string]string{}
	failed := map[string]error{}
	linted, apart = map[string]*Report{}, map[string]*Report{}
	work := tb.TempDir()
	for _, e := range readCorpus(tb) {
		run := func(tb testing.TB) {
			if _, seen := roots[e.Module]; !seen && failed[e.Module] == nil {
				root, err := downloadModule(e.Module, work)
				roots[e.Module], failed[e.Module] = root, err
			}
			if err := failed[e.Module]; err != nil {
				if _, bench := tb.(skipLogger); bench {
					tb.Skipf("%s: module %s cannot be downloaded through the module cache, entry left out: %v", e.Name, e.Module, err)
					return
				}
				moduleUnavailable(tb, "%s: module %s cannot be downloaded through the module cache: %v", e.Name, e.Module, err)
				return
			}
			e.modRoot = roots[e.Module]
			start := time.Now()
			rep, n := lintEntry(tb, e)
			took += time.Since(start)
			size += n
			linted[e.Name] = rep
			apart[e.Name] = lintApart(tb, e)
		}
		if t, ok := tb.(*testing.T); ok {
			t.Run(e.Name, func(t *testing.T) { run(t) })
		} else {
			run(skipLogger{tb})
		}
	}
	return linted, apart, size, took
}

// skipLogger turns a benchmark's Skipf for one entry into a log line, so the other entries are
// still measured.
type skipLogger struct{ testing.TB }

func (s skipLogger) Skipf(format string, args ...any) { s.Logf(format, args...) }

// writeLabelSkeleton rewrites labels.txt keeping every existing label and adding the unlabelled
// findings as "??" lines with their message, for a human to judge.
func writeLabelSkeleton(t *testing.T, labels map[string]corpusLabel, linted map[string]*Report) {
	t.Helper()
	var b strings.Builder
	old, _ := os.ReadFile(corpusLabels)
	sc := bufio.NewScanner(bytes.NewReader(old))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	var names []string
	for n := range linted {
		names = append(names, n)
	}
	sort.Strings(names)
	seen := map[string]bool{}
	for _, n := range names {
		for _, f := range linted[n].Findings {
			k := labelKey(n, f)
			if f.Severity < Warning || seen[k] {
				continue
			}
			seen[k] = true
			if _, ok := labels[k]; !ok {
				fmt.Fprintf(&b, "%s ?? %s: %s\n", k, f.Severity, f.Message)
			}
		}
	}
	if err := os.WriteFile(corpusLabels, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationRealCorpus lints the real-world corpus and holds precision and recall against the
// labels. It downloads the corpus modules through the Go module proxy (about 790 MB into an empty
// module cache, ~35 s; ~6 s warm): skipped with -short, and an entry that cannot be downloaded
// fails it unless PROBEGATE_OFFLINE=1.
func TestIntegrationRealCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("the real-world corpus is fetched through the module cache; skipped with -short")
	}
	labels := readLabels(t)
	linted, apart, _, _ := lintCorpus(t)
	if len(linted) == 0 {
		if !t.Failed() {
			t.Skip("no corpus module could be downloaded (" + offlineEnv + "=1); nothing to measure")
		}
		return
	}
	if t.Failed() {
		return // entries could not be downloaded: precision and recall over the rest would mislead
	}
	for name, rep := range linted {
		for _, p := range rep.Problems {
			t.Errorf("%s: a real install manifest must lint without problems: %v", name, p)
		}
		for _, f := range rep.Findings {
			if strings.TrimSpace(f.Fix) == "" {
				t.Errorf("%s: %s %s %s states no fix", name, f.RuleID, f.Object, f.Container)
			}
		}
	}
	if *update {
		writeLabelSkeleton(t, labels, linted)
		return
	}
	s := score(labels, linted)
	for _, k := range s.Unlabelled {
		t.Errorf("unlabelled finding, add to %s: %s TP|FP reason", corpusLabels, k)
	}
	for _, k := range s.Stale {
		t.Errorf("%s: %s", corpusLabels, k)
	}
	t.Logf("corpus: %d entries linted, %d true and %d false positives at warning or above, %d labelled problems, %d known misses",
		len(linted), s.TP, s.FP, s.Labelled, s.Misses)
	t.Logf("precision %.3f (held >= %.3f, goal >= %.2f), recall %.3f (held >= %.3f)",
		s.precision(), corpusMinPrecision, corpusPrecisionGoal, s.recall(), corpusMinRecall)
	checkGoodInstallsPass(t, labels, linted)
	checkApart(t, labels, s, apart)
	if p := s.precision(); p < corpusMinPrecision {
		t.Errorf("precision %.3f on warnings and errors fell below the labelled corpus's %.3f", p, corpusMinPrecision)
	}
	if r := s.recall(); r < corpusMinRecall {
		t.Errorf("recall %.3f is below the labelled corpus's %.3f: a true positive is no longer found", r, corpusMinRecall)
	}
}

// apartMaxGap is the bar: recall and precision with every workload linted alone, its
// Services in other files, stay within 5 points of the joint run's.
const apartMaxGap = 0.05

// apartMinPrecision and apartMinRecall are what the one-file-at-a-time runs reach: the test holds
// them as ratchets (they may only go up while the corpus stays the same). History: 75 true
// positives of 79 labelled problems and 14 false positives (0.949, 0.843) when a workload with no
// Service in view was first judged as if one routed to its declared ports: recall 5.1 and precision
// 7.6 points below the joint run's, the controllers whose only Services are scrape targets or
// headless looking like servers on a port named http or https (kyverno's background and reports
// controllers, keda-operator, prometheus-operator). 77 of 79 and 5 false positives (0.975, 0.939)
// once a controller is taken to serve only through its webhook and probed ports, and a container
// that declares no port but has a readiness probe on one as served on a port it does not declare
// (jaeger's PG001 and PG009). Still missed: istio's busybox `liveness` sample (PG009, PG014)
// declares no port and no readiness probe, so nothing in its manifest says it serves. The 5 false
// positives are the joint run's own (podinfo's in-app delay ×3, descheduler ×2); precision alone is
// above the joint run's, which also counts kwok's scrape-only Service (a controller, alone).
const (
	apartMinPrecision = 0.939
	apartMinRecall    = 0.974
)

// scoreApart scores the findings of the one-file-at-a-time runs against the joint run's labels.
// Labels are per finding, so a finding the joint run also makes keeps its label: TP, FP, or a MISS
// now found (a TP). A finding only the lone run makes carries no label, and counts as a false
// positive: the joint run sees the Services and judged the container not to serve user traffic, so
// a finding that rests on assuming it does is taken to be wrong. (Matching it to a label of the same
// rule and object with another container would count a finding about the wrong container right.)
// Recall divides by the same labelled problems as the joint run.
func scoreApart(labels map[string]corpusLabel, apart map[string]*Report) (s corpusScore, unlabelled []string) {
	seen := map[string]bool{}
	for entry, rep := range apart {
		for _, f := range rep.Findings {
			k := labelKey(entry, f)
			if f.Severity < Warning || seen[k] {
				continue
			}
			seen[k] = true
			switch l, ok := labels[k]; {
			case !ok:
				s.FP++
				unlabelled = append(unlabelled, k)
			case l.Verdict == "FP":
				s.FP++
			default:
				s.TP++
			}
		}
	}
	for k, l := range labels {
		entry, _, _ := strings.Cut(k, " ")
		if apart[entry] != nil && (l.Verdict == "TP" || l.Verdict == "MISS") {
			s.Labelled++
		}
	}
	sort.Strings(unlabelled)
	return s, unlabelled
}

// checkApart holds recall and precision of the one-file-at-a-time runs within apartMaxGap of the
// joint run's (scored as joint).
func checkApart(t *testing.T, labels map[string]corpusLabel, joint corpusScore, apart map[string]*Report) {
	t.Helper()
	s, unlabelled := scoreApart(labels, apart)
	for _, k := range unlabelled {
		t.Logf("only with no Service in view (counted as a false positive): %s", k)
	}
	t.Logf("each workload alone: %d true and %d false positives, precision %.3f (joint %.3f), recall %.3f (joint %.3f)",
		s.TP, s.FP, s.precision(), joint.precision(), s.recall(), joint.recall())
	printApartGaps(joint, s)
	for _, m := range []struct {
		name              string
		apart, joint, min float64
	}{{"recall", s.recall(), joint.recall(), apartMinRecall}, {"precision", s.precision(), joint.precision(), apartMinPrecision}} {
		if gap := m.joint - m.apart; gap > apartMaxGap {
			t.Errorf("%s with each workload linted alone is %.3f, %.1f points below the joint run's %.3f (goal: within %.0f)",
				m.name, m.apart, 100*gap, m.joint, 100*apartMaxGap)
		}
		if m.apart < m.min {
			t.Errorf("%s with each workload linted alone fell to %.3f, below the %.3f it reached (see apartMinPrecision)", m.name, m.apart, m.min)
		}
	}
}

// printApartGaps prints, as FIGURE lines, how many points recall and precision with each workload
// linted alone are below the joint run's (negative when above), against the goal.
func printApartGaps(joint, apart corpusScore) {
	goal := fmt.Sprintf("<=%g", 100*apartMaxGap)
	benchfig.Print("lint-recall-gap-points", round1(100*(joint.recall()-apart.recall())), "points", goal)
	benchfig.Print("lint-precision-gap-points", round1(100*(joint.precision()-apart.precision())), "points", goal)
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// corpusGateExceptions are the corpus installs an expert calls good (no TP or MISS label) that
// `--fail-on warning` still fails, each with why lint cannot tell from the manifest. The user's way
// out is the per-object annotation probegate.dev/ignore with the reason below.
var corpusGateExceptions = map[string]string{
	"descheduler": "PG009 and PG014 on descheduler: the install ships no Service, so lint judges it as if one " +
		"routed to its only port, which serves health checks and metrics",
	"kwok": "PG009 and PG007 on kwok-controller: its ClusterIP Service (port \"http\", the probe port) " +
		"serves only scrapers and nothing in the manifests says so",
}

// checkGoodInstallsPass holds the third bar: `--fail-on warning` passes on every linted
// install whose labels hold no real problem (no TP, no MISS), except the listed exceptions; an
// exception that passes is stale.
func checkGoodInstallsPass(t *testing.T, labels map[string]corpusLabel, linted map[string]*Report) {
	t.Helper()
	bad := map[string]bool{}
	for _, l := range labels {
		if l.Verdict == "TP" || l.Verdict == "MISS" {
			bad[strings.Fields(l.Key)[0]] = true
		}
	}
	var good, passed []string
	for name, rep := range linted {
		if bad[name] {
			continue
		}
		good = append(good, name)
		why, excepted := corpusGateExceptions[name]
		switch {
		case !rep.Failed():
			passed = append(passed, name)
			if excepted {
				t.Errorf("%s passes --fail-on warning now: drop it from corpusGateExceptions (%s)", name, why)
			}
		case !excepted:
			t.Errorf("%s: no real problem is labelled, yet --fail-on warning fails it (%d findings at warning or above)",
				name, AtOrAbove(rep.Findings, Warning))
		}
	}
	t.Logf("--fail-on warning passes %d of the %d installs with no labelled problem; known exceptions: %v",
		len(passed), len(good), corpusGateExceptions)
}

// BenchmarkLintCorpus prints the corpus figures for `make bench`: precision and recall, joint and
// with each workload linted alone, the gaps between them, and the time to lint one MB of real
// manifests (read, parse and judge; BenchmarkLintGenerated times a 5 MB input).
func BenchmarkLintCorpus(b *testing.B) {
	labels := readLabels(b)
	var linted, apart map[string]*Report
	var size int64
	var took time.Duration
	for i := 0; i < b.N; i++ {
		linted, apart, size, took = lintCorpus(b)
	}
	if len(linted) == 0 {
		b.Skip("no corpus module could be downloaded; no lint figures")
	}
	s := score(labels, linted)
	benchfig.Print("lint-precision", round3(s.precision()), "ratio", fmt.Sprintf(">=%g", corpusPrecisionGoal))
	benchfig.Print("lint-recall", round3(s.recall()), "ratio", fmt.Sprintf(">=%g", corpusMinRecall))
	a, _ := scoreApart(labels, apart)
	benchfig.Print("lint-precision-services-apart", round3(a.precision()), "ratio", fmt.Sprintf(">=%g", round3(s.precision()-apartMaxGap)))
	benchfig.Print("lint-recall-services-apart", round3(a.recall()), "ratio", fmt.Sprintf(">=%g", round3(s.recall()-apartMaxGap)))
	printApartGaps(s, a)
	mb := float64(size) / (1 << 20)
	benchfig.Print("lint-corpus-seconds-per-mb", round3(took.Seconds()/mb), "s/MB", "<=0.5")
}

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

// TestCorpusScore checks the scoring on a made-up corpus: labels found, missed, unlabelled, stale.
func TestCorpusScore(t *testing.T) {
	f := func(rule, obj string, sev Severity) Finding {
		return Finding{RuleID: rule, Object: obj, Container: "app", Severity: sev}
	}
	linted := map[string]*Report{"a": {Findings: []Finding{
		f("PG001", "deployment/x", Error), f("PG009", "deployment/x", Warning),
		f("PG003", "deployment/y", Warning), f("PG014", "deployment/z", Info),
	}}}
	labels := map[string]corpusLabel{
		"a PG001 deployment/x app -": {Verdict: "TP"},
		"a PG009 deployment/x app -": {Verdict: "FP"},
		"a PG002 deployment/x app -": {Verdict: "TP"},   // no longer found: a recall loss
		"a PG005 deployment/x app -": {Verdict: "MISS"}, // a known miss
		"a PG007 deployment/x app -": {Verdict: "FP"},   // fixed: stale
		"b PG001 deployment/x app -": {Verdict: "TP"},   // entry not linted: left out
	}
	s := score(labels, linted)
	if s.TP != 1 || s.FP != 1 || s.Labelled != 3 || s.Misses != 1 {
		t.Errorf("score = %+v, want 1 TP, 1 FP, 3 labelled, 1 miss", s)
	}
	if len(s.Unlabelled) != 1 || s.Unlabelled[0] != "a PG003 deployment/y app -" {
		t.Errorf("unlabelled = %q, want the PG003 warning only (info is not labelled)", s.Unlabelled)
	}
	if len(s.Stale) != 1 || !strings.HasPrefix(s.Stale[0], "a PG007") {
		t.Errorf("stale = %q, want the fixed PG007 label", s.Stale)
	}
	if p, r := s.precision(), s.recall(); p != 0.5 || r != 1.0/3 {
		t.Errorf("precision, recall = %v, %v; want 0.5, 1/3", p, r)
	}
}
