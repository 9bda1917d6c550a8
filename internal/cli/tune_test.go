package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/reports"
)

func TestTuneBadInputIsOneLineExit2(t *testing.T) {
	empty := t.TempDir()
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "report.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"missing dir":    {"tune", filepath.Join(empty, "nope")},
		"no report.json": {"tune", empty},
		"malformed":      {"tune", bad},
		"unknown output": {"tune", "-o", "yaml", empty},
	} {
		code, stdout, stderr := runMain(t, args...)
		if code != ExitError || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "probegate: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line", name, code, stdout, stderr)
		}
	}
}

func TestTuneOutputs(t *testing.T) {
	spec := `{"terminationGracePeriodSeconds":25,"containers":[{"name":"target",` +
		`"readinessProbe":{"httpGet":{"path":"/ready","port":8080},"periodSeconds":1},` +
		`"livenessProbe":{"httpGet":{"path":"/live","port":8080},"periodSeconds":5,"failureThreshold":3}}]}`
	dir := savedRun(t, func(r *reports.Report) {
		for _, s := range r.Scenarios {
			s.Timeline.Append(timeline.Entry{Kind: timeline.KindWorkload, At: s.Timeline.Start(), Workload: &timeline.WorkloadSpec{
				Kind: "Deployment", Name: "target", Container: "target", PodSpec: json.RawMessage(spec)}})
		}
	})
	code, text, stderr := runMain(t, "tune", dir)
	if code != ExitOK || !strings.Contains(text, "deployment/target container target") ||
		!strings.Contains(text, "terminationGracePeriodSeconds") || strings.Contains(text, "skipped") {
		t.Fatalf("text: exit %d, stderr %q\n%s", code, stderr, text)
	}
	code, raw, _ := runMain(t, "tune", "-o", "json", filepath.Join(dir, "report.json"))
	var doc struct {
		Runs      []string          `json:"runs"`
		Workloads []json.RawMessage `json:"workloads"`
		Skipped   []string          `json:"skipped"`
	}
	if code != ExitOK || json.Unmarshal([]byte(raw), &doc) != nil || len(doc.Runs) != 1 {
		t.Fatalf("json: exit %d\n%s", code, raw)
	}
	code, patch, _ := runMain(t, "tune", "-o", "patch", dir)
	if code != ExitOK || !strings.HasPrefix(patch, "# probegate tune") {
		t.Fatalf("patch: exit %d\n%s", code, patch)
	}
}

func TestTuneVerifyFlags(t *testing.T) {
	dir := savedRun(t, func(*reports.Report) {})
	for name, args := range map[string][]string{
		"verify with json":       {"tune", "--verify", "-o", "json", dir},
		"target without verify":  {"tune", "--target", "app.yaml", dir},
		"kubeconfig sans verify": {"tune", "--kubeconfig", "kc", dir},
	} {
		code, stdout, stderr := runMain(t, args...)
		if code != ExitError || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line", name, code, stdout, stderr)
		}
	}
}

// TestTuneVerifyWithNothingToVerify: runs whose settings tune keeps or leaves alone give nothing
// to re-run: no cluster is touched, the table says so, and the exit is 3 (nothing was shown).
func TestTuneVerifyWithNothingToVerify(t *testing.T) {
	spec := `{"terminationGracePeriodSeconds":25,"containers":[{"name":"target",` +
		`"readinessProbe":{"httpGet":{"path":"/ready","port":8080},"periodSeconds":1},` +
		`"livenessProbe":{"httpGet":{"path":"/live","port":8080},"periodSeconds":5,"failureThreshold":3}}]}`
	dir := savedRun(t, func(r *reports.Report) {
		for _, s := range r.Scenarios {
			s.Timeline.Append(timeline.Entry{Kind: timeline.KindWorkload, At: s.Timeline.Start(), Workload: &timeline.WorkloadSpec{
				Kind: "Deployment", Name: "target", Container: "target", PodSpec: json.RawMessage(spec)}})
		}
	})
	code, out, stderr := runMain(t, "tune", "--verify", "--kubeconfig", filepath.Join(t.TempDir(), "no-such-kubeconfig"), dir)
	if code != ExitInconclusive || !strings.Contains(out, "applied: nothing") || !strings.Contains(out, "conclusions:") || stderr != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, out)
	}
}

func TestRunTunePrintsRecommendationsFromTheReport(t *testing.T) {
	dir := savedRun(t, func(*reports.Report) {})
	var b strings.Builder
	cmd := &cobra.Command{}
	cmd.SetOut(&b)
	printTune(cmd, dir)
	if !strings.Contains(b.String(), "tune (probegate tune "+dir) || !strings.Contains(b.String(), "skipped "+dir+": pod-delete/good") {
		t.Errorf("run --tune printed:\n%s", b.String())
	}
}
