package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/probegate/probegate/internal/testcluster"
)

// runMain runs probegate with args and returns its exit code, stdout and stderr.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	outF, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errF, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outF, errF
	code := Main(args)
	os.Stdout, os.Stderr = oldOut, oldErr
	outF.Close()
	errF.Close()
	stdout, _ := os.ReadFile(outF.Name())
	stderr, _ := os.ReadFile(errF.Name())
	return code, string(stdout), string(stderr)
}

func lintData(parts ...string) string {
	return filepath.Join(append([]string{"..", "lint", "testdata"}, parts...)...)
}

// TestLintExitCodes: 0 when nothing reaches --fail-on, 1 when something does, 2 on bad input.
func TestLintExitCodes(t *testing.T) {
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "broken.yaml"), []byte("apiVersion: v1\nkind: Service\nmetadata: {name: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "crd.yaml"), []byte("apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: example.test/v1\nkind: Widget\nmetadata: {name: w}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"empty.yaml": "", "comments.yaml": "# nothing here yet\n---\n# still nothing\n"} {
		if err := os.WriteFile(filepath.Join(bad, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	clean := lintData("rules", "identical-probes", "clean.yaml")
	warnOnly := lintData("rules", "readiness-window-too-long", "trigger.yaml")
	withError := lintData("rules", "liveness-checks-dependency", "trigger.yaml")
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string // substring of the one stderr line for code 2
	}{
		{"clean", []string{"lint", clean}, 0, ""},
		{"good install passes fail-on warning", []string{"lint", lintData("good-install")}, 0, ""},
		{"warning fails by default", []string{"lint", warnOnly}, 1, ""},
		{"warning below fail-on error", []string{"lint", "--fail-on", "error", warnOnly}, 0, ""},
		{"error at fail-on error", []string{"lint", "--fail-on", "error", withError}, 1, ""},
		{"fail-on none", []string{"lint", "--fail-on", "none", withError}, 0, ""},
		{"cold start makes budget an error", []string{"lint", "--fail-on", "error", "--cold-start", "90s", clean}, 1, ""},
		{"json", []string{"lint", "-o", "json", withError}, 1, ""},
		{"sarif", []string{"lint", "-o", "sarif", clean}, 0, ""},
		{"explain", []string{"lint", "--explain", "PG002"}, 0, ""},
		{"list rules", []string{"lint", "--list-rules"}, 0, ""},
		{"missing file", []string{"lint", filepath.Join(bad, "nope.yaml")}, 2, "nope.yaml: no such file or directory"},
		{"unparseable", []string{"lint", filepath.Join(bad, "broken.yaml")}, 2, "broken.yaml:3: invalid YAML"},
		{"unknown kind is skipped", []string{"lint", filepath.Join(bad, "crd.yaml")}, 0, ""},
		{"empty file", []string{"lint", filepath.Join(bad, "empty.yaml")}, 2, "empty.yaml: no Kubernetes object in it"},
		{"comment-only file", []string{"lint", filepath.Join(bad, "comments.yaml"), clean}, 2, "comments.yaml: no Kubernetes object in it"},
		{"bad file beside a good one", []string{"lint", filepath.Join(bad, "broken.yaml"), withError}, 2, "broken.yaml:3: invalid YAML"},
		{"disable one of two", []string{"lint", "--disable", "PG007", warnOnly}, 1, ""},
		{"disable both", []string{"lint", "--disable", "PG007,PG002", warnOnly}, 0, ""},
		{"disable by name, repeated", []string{"lint", "--disable", "readiness-window-too-long", "--disable", "liveness-before-readiness", warnOnly}, 0, ""},
		{"disable unknown rule", []string{"lint", "--disable", "PG999", clean}, 2, `no rule "PG999"`},
		{"no input", []string{"lint"}, 2, "no manifest files"},
		{"bad output", []string{"lint", "-o", "xml", clean}, 2, `unknown output format "xml"`},
		{"bad fail-on", []string{"lint", "--fail-on", "fatal", clean}, 2, "--fail-on"},
		{"negative duration", []string{"lint", "--cold-start", "-5s", clean}, 2, "must not be negative"},
		{"files and namespace", []string{"lint", "--namespace", "x", clean}, 2, "not both"},
		{"missing report", []string{"lint", "--report", filepath.Join(bad, "report.json"), clean}, 2, "report.json: read report"},
		{"unknown rule", []string{"lint", "--explain", "PG999"}, 2, `no rule "PG999"`},
		{"unknown flag", []string{"lint", "--bogus"}, 2, "unknown flag"},
		{"unreachable cluster", []string{"lint", "--namespace", "x", "--kubeconfig", filepath.Join(bad, "missing-kubeconfig")}, 2, "kubeconfig"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			if c.code == 2 {
				if !strings.Contains(stderr, c.stderr) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
					t.Errorf("stderr %q, want one line containing %q", stderr, c.stderr)
				}
				return
			}
			if stdout == "" {
				t.Error("no output")
			}
			switch {
			case c.name == "json" || c.name == "sarif":
				var v map[string]any
				if err := json.Unmarshal([]byte(stdout), &v); err != nil {
					t.Errorf("-o %s output is not JSON: %v", c.name, err)
				}
			case c.name == "explain":
				if !strings.Contains(stdout, "liveness-before-readiness") || !strings.Contains(stdout, "short-freeze") ||
					!strings.Contains(stdout, "Evidence: ") {
					t.Errorf("explain output: %s", stdout)
				}
			}
		})
	}
}

// TestLintExplainMatrixEvidence checks that --explain derives the mutation matrix's evidence from
// the embedded matrix and fixtures, as RULES.md lists it.
func TestLintExplainMatrixEvidence(t *testing.T) {
	code, stdout, stderr := runMain(t, "lint", "--explain", "PG005")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	if want := "variant deep-liveness, where db-slowness FAILs no-liveness-restarts"; !strings.Contains(stdout, want) {
		t.Errorf("--explain PG005 does not say %q:\n%s", want, stdout)
	}
}

// TestIntegrationLintNamespace runs `probegate lint --namespace` against the kind cluster: a
// Deployment behind a Service whose liveness and readiness are identical fails with exit 1 and names it; an empty
// namespace passes; a kubeconfig context that does not exist is bad input (exit 2).
func TestIntegrationLintNamespace(t *testing.T) {
	env := testcluster.Require(t)
	ns := env.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kubeconfig := env.Cluster.Kubeconfig

	code, stdout, stderr := runMain(t, "lint", "--namespace", ns, "--kubeconfig", kubeconfig)
	if code != 0 || !strings.Contains(stdout, "no findings") {
		t.Fatalf("empty namespace: exit %d\n%s%s", code, stdout, stderr)
	}

	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}}
	zero := int32(0)
	labels := map[string]string{"app": "lint-it"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "lint-it"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &zero, // no pod, no image
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "probegate/none:dev", ImagePullPolicy: corev1.PullNever,
					Ports:         []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					LivenessProbe: probe, ReadinessProbe: probe,
				}}},
			},
		},
	}
	if _, err := env.Client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Identical probes matter where traffic is routed: a Service sends it to the pods.
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "lint-it"},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
	}
	if _, err := env.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runMain(t, "lint", "--namespace", ns, "--kubeconfig", kubeconfig, "-o", "json")
	if code != 1 {
		t.Fatalf("identical probes: exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	var doc struct {
		Findings []struct {
			RuleID string `json:"ruleId"`
			Object string `json:"object"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range doc.Findings {
		found = found || (f.RuleID == "PG001" && f.Object == "deployment/lint-it")
	}
	if !found {
		t.Errorf("no PG001 on deployment/lint-it: %s", stdout)
	}

	code, _, stderr = runMain(t, "lint", "--namespace", ns, "--kubeconfig", kubeconfig, "--context", "no-such-context")
	if code != 2 || !strings.Contains(stderr, "no-such-context") {
		t.Errorf("unknown context: exit %d, stderr %q", code, stderr)
	}
}

// TestLintMachineOutputOnBadInput: with -o json or -o sarif, bad input beside a good file still
// prints one complete document on stdout (exit 2): the error is in it, and so are the good file's
// findings, so a CI step that parses the output never gets nothing.
func TestLintMachineOutputOnBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: Service\nmetadata: {name: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	withError := lintData("rules", "liveness-checks-dependency", "trigger.yaml")

	code, stdout, _ := runMain(t, "lint", "-o", "json", bad, withError)
	var doc struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
		Findings []struct {
			RuleID string `json:"ruleId"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("-o json on bad input (exit %d) is not one JSON document: %v\n%s", code, err, stdout)
	}
	if code != 2 || len(doc.Errors) != 1 || !strings.Contains(doc.Errors[0].Message, "invalid YAML") || len(doc.Findings) == 0 {
		t.Errorf("-o json: exit %d, errors %+v, %d findings; want exit 2, the YAML error and the good file's findings", code, doc.Errors, len(doc.Findings))
	}

	code, stdout, _ = runMain(t, "lint", "-o", "sarif", bad, withError)
	var log struct {
		Runs []struct {
			Invocations []struct {
				ExecutionSuccessful bool `json:"executionSuccessful"`
				Notifications       []struct {
					Message struct {
						Text string `json:"text"`
					} `json:"message"`
				} `json:"toolExecutionNotifications"`
			} `json:"invocations"`
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &log); err != nil {
		t.Fatalf("-o sarif on bad input (exit %d) is not one JSON document: %v\n%s", code, err, stdout)
	}
	if code != 2 || len(log.Runs) != 1 || len(log.Runs[0].Invocations) != 1 || len(log.Runs[0].Results) == 0 {
		t.Fatalf("-o sarif: exit %d, %+v; want exit 2, one run with an invocation and the good file's results", code, log)
	}
	inv := log.Runs[0].Invocations[0]
	if inv.ExecutionSuccessful || len(inv.Notifications) != 1 || !strings.Contains(inv.Notifications[0].Message.Text, "invalid YAML") {
		t.Errorf("-o sarif invocation %+v; want executionSuccessful false and the YAML error as a notification", inv)
	}
}

// TestLintOddInput: a typed list is read like a List, a hidden manifest in a directory is named as
// skipped, and the JSON document says failed when input could not be read.
func TestLintOddInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	list := write("list.yaml", `apiVersion: apps/v1
kind: DeploymentList
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: api}
  spec:
    selector: {matchLabels: {app: api}}
    template:
      metadata: {labels: {app: api}}
      spec:
        containers: [{name: api, image: api:1}]
`)
	code, stdout, stderr := runMain(t, "lint", "--fail-on", "none", list)
	if code != 0 || !strings.Contains(stdout, "1 workload") {
		t.Errorf("DeploymentList: exit %d, want 0 with one workload read\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	hidden := filepath.Join(dir, "manifests")
	if err := os.Mkdir(hidden, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(lintData("rules", "identical-probes", "clean.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"app.yaml", ".draft.yaml"} {
		if err := os.WriteFile(filepath.Join(hidden, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, _ = runMain(t, "lint", "--fail-on", "none", hidden)
	if code != 0 || !strings.Contains(stdout, ".draft.yaml: skipped: a hidden file") || !strings.Contains(stdout, "other object") {
		t.Errorf("hidden file: exit %d, want 0 naming .draft.yaml as skipped and counting it\nstdout:\n%s", code, stdout)
	}

	broken := write("broken.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: [\n")
	code, stdout, _ = runMain(t, "lint", "-o", "json", broken)
	var doc struct{ Failed bool }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("-o json on bad input is not JSON: %v\n%s", err, stdout)
	}
	if code != 2 || !doc.Failed {
		t.Errorf("-o json on unreadable input: exit %d, failed %v; want 2 and true", code, doc.Failed)
	}
}
