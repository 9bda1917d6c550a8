package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const twoDocs = `# leading comment
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
---
# only a comment: skipped
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web:1
        livenessProbe:
          httpGet: {path: /live, port: 8080}
`

func TestParseTracksLinesAcrossDocuments(t *testing.T) {
	inv, err := Parse("m.yaml", []byte(twoDocs))
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Services) != 1 || len(inv.Workloads) != 1 {
		t.Fatalf("got %d services, %d workloads; want 1 and 1", len(inv.Services), len(inv.Workloads))
	}
	if got := inv.Services[0].Pos; got != (Position{"m.yaml", 3}) {
		t.Errorf("service at %v, want m.yaml:3", got)
	}
	w := inv.Workloads[0]
	if w.Pos.Line != 11 {
		t.Errorf("deployment at line %d, want 11", w.Pos.Line)
	}
	c := w.Containers()[0]
	if got := w.AtContainer(c, "livenessProbe").Line; got != 22 {
		t.Errorf("livenessProbe at line %d, want 22", got)
	}
	if got := w.AtContainer(c, "livenessProbe", "httpGet").Line; got != 23 {
		t.Errorf("httpGet at line %d, want 23", got)
	}
	// A missing field falls back to the deepest existing node: the container.
	if got := w.AtContainer(c, "readinessProbe").Line; got != 20 {
		t.Errorf("missing readinessProbe at line %d, want the container's line 20", got)
	}
	if w.PodLabels["app"] != "web" || w.Containers()[0].LivenessProbe.HTTPGet.Path != "/live" {
		t.Errorf("typed decode lost fields: %+v", w)
	}
}

func TestParseSeparatorWithContent(t *testing.T) {
	in := "--- {apiVersion: v1, kind: Service, metadata: {name: a}}\n--- # comment\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n"
	inv, err := Parse("s.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Services) != 2 {
		t.Fatalf("got %d services, want 2", len(inv.Services))
	}
	if inv.Services[0].Pos.Line != 1 || inv.Services[1].Pos.Line != 3 {
		t.Errorf("positions %v, %v; want lines 1 and 3", inv.Services[0].Pos, inv.Services[1].Pos)
	}
}

func TestParseListAndSkippedKinds(t *testing.T) {
	in := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: cfg}
- apiVersion: apps/v1
  kind: StatefulSet
  metadata: {name: db}
  spec:
    template:
      spec:
        containers: [{name: db, image: db:1}]
- apiVersion: batch/v1
  kind: CronJob
  metadata: {name: nightly}
  spec:
    jobTemplate:
      spec:
        template:
          spec:
            containers: [{name: job, image: job:1}]
`
	inv, err := Parse("list.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Skipped) != 1 || inv.Skipped[0].Kind != "ConfigMap" || inv.Skipped[0].Pos.Line != 4 {
		t.Errorf("skipped = %+v, want the ConfigMap at line 4", inv.Skipped)
	}
	if len(inv.Workloads) != 2 {
		t.Fatalf("got %d workloads, want 2", len(inv.Workloads))
	}
	sts, cj := inv.Workloads[0], inv.Workloads[1]
	if sts.Ref() != "statefulset/db" || sts.Pos.Line != 7 {
		t.Errorf("first item %s at %v, want statefulset/db at line 7", sts.Ref(), sts.Pos)
	}
	if got := sts.AtContainer(sts.Containers()[0]).Line; got != 13 {
		t.Errorf("statefulset container at line %d, want 13", got)
	}
	if cj.Ref() != "cronjob/nightly" || len(cj.Containers()) != 1 || cj.Containers()[0].Name != "job" {
		t.Errorf("cronjob decoded as %s with %d containers", cj.Ref(), len(cj.Containers()))
	}
	if got := cj.AtContainer(cj.Containers()[0]).Line; got != 22 {
		t.Errorf("cronjob container at line %d, want 22", got)
	}
}

// TestParseBadInput: every kind of bad input is one error naming the file and line.
func TestParseBadInput(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"syntax", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\nmetadata:\n  name: x\n   bad: indent\n", "f.yaml:7: invalid YAML"},
		{"unknown kind", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\n\napiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: x}\n", `f.yaml:6: unknown kind "Deploymnet" in apps/v1`},
		{"unrendered helm", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include \"x.fullname\" . }}\n", "f.yaml:4: looks like an unrendered Helm template"},
		{"no kind", "apiVersion: v1\nmetadata: {name: x}\n", "f.yaml:1: object has no kind"},
		{"no apiVersion", "kind: Pod\nmetadata: {name: x}\n", "f.yaml:1: Pod has no apiVersion"},
		{"kind not a string", "apiVersion: v1\nkind:\n  name: Pod\n", "f.yaml:3: field kind: got a object, want string"},
		{"numeric apiVersion", "apiVersion: 1\nkind: Pod\nmetadata: {name: x}\n", `f.yaml:1: unsupported apiVersion "1" for Pod`},
		{"old apiVersion without template", "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: x}\n", `f.yaml:1: unsupported apiVersion "extensions/v1beta1" for Deployment`},
		{"not a mapping", "- a\n- b\n", "f.yaml:1: document is not a Kubernetes object"},
		{"no name", "apiVersion: v1\nkind: Pod\nspec: {}\n", "f.yaml:1: Pod has no metadata.name"},
		{"wrong type", `apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  template:
    spec:
      containers:
      - name: a
        image: a
        livenessProbe: {periodSeconds: 10}
      - name: b
        image: b
        livenessProbe:
          periodSeconds: "ten"
`, "f.yaml:14: field spec.template.spec.containers.livenessProbe.periodSeconds: got a string, want int32"},
		{"duplicate key", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: a}\nkind: Pod\n", `f.yaml:8: duplicate key "kind" (first at line 6)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(c.in))
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !IsInputError(err) {
				t.Errorf("error %v is not an InputError", err)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error %q, want prefix %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestLoadPaths(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n")
	write("sub/b.yml", "apiVersion: v1\nkind: Service\nmetadata: {name: b}\n")
	write("notes.txt", "not yaml: [")
	write(".hidden/c.yaml", "garbage: [")

	inv, err := LoadPaths([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Services) != 2 || inv.Services[1].Pos.File != filepath.Join(dir, "sub", "b.yml") {
		t.Fatalf("services = %+v, want a.yaml and sub/b.yml", inv.Services)
	}

	inv, err = LoadPaths([]string{"-"}, strings.NewReader("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"))
	if err != nil || len(inv.Services) != 1 || inv.Services[0].Pos.File != "<stdin>" {
		t.Fatalf("stdin: %v, %+v", err, inv)
	}

	if _, err := LoadPaths(nil, nil); err == nil || !IsInputError(err) {
		t.Errorf("LoadPaths(nil) = %v, want an InputError", err)
	}
	// A missing file or an empty directory is a problem of its own: the other paths are still read.
	missing := filepath.Join(dir, "missing.yaml")
	inv, err = LoadPaths([]string{missing, t.TempDir(), filepath.Join(dir, "a.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Services) != 1 || len(inv.Problems) != 2 {
		t.Fatalf("services %d, problems %v; want a.yaml read and two problems", len(inv.Services), inv.Problems)
	}
	if want := missing + ": no such file or directory"; inv.Problems[0].Error() != want {
		t.Errorf("missing file: %v, want %q", inv.Problems[0], want)
	}
}

// TestParseKeepsGoing: unknown kinds are skipped and counted, anything with a pod template is a
// workload whatever its kind, and a broken document hides nothing after it. (The patterns come from
// real install manifests: webhook configurations and an APIService beside the Deployment, as in
// ingress-nginx, gatekeeper and metrics-server; Argo Rollouts' Rollout kind; a Helm chart template.)
func TestParseKeepsGoing(t *testing.T) {
	in := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: hook}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: canary}
spec:
  replicas: 4
  strategy: {canary: {}}
  template:
    metadata: {labels: {app: canary}}
    spec:
      containers:
      - name: app
        image: app:1
        readinessProbe: {httpGet: {path: /ready, port: 8080}}
---
metadata:
  name: {{ .Release.Name }}
---
apiVersion: extensions/v1beta1
kind: Deployment
metadata: {name: legacy}
spec:
  template:
    spec:
      containers: [{name: legacy, image: legacy:1}]
---
apiVersion: example.test/v1
kind: CronWidget
metadata: {name: cw}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: job, image: job:1}]
`
	inv, err := Parse("k.yaml", []byte(in))
	if err == nil || !strings.Contains(err.Error(), "k.yaml:20: looks like an unrendered Helm template") {
		t.Errorf("error %v, want the Helm template at line 20", err)
	}
	if len(inv.Problems) != 1 {
		t.Errorf("problems %v, want one", inv.Problems)
	}
	if inv.UnknownKinds() != 1 || inv.Skipped[0].Kind != "ValidatingWebhookConfiguration" {
		t.Errorf("skipped %+v, want the webhook configuration as unknown", inv.Skipped)
	}
	var refs []string
	for _, w := range inv.Workloads {
		refs = append(refs, w.Ref())
	}
	if strings.Join(refs, " ") != "rollout/canary deployment/legacy cronwidget/cw" {
		t.Fatalf("workloads %v", refs)
	}
	ro := inv.Workloads[0]
	if ro.Replicas == nil || *ro.Replicas != 4 || ro.Containers()[0].ReadinessProbe == nil {
		t.Errorf("rollout decoded as %+v", ro)
	}
	if got := ro.AtContainer(ro.Containers()[0], "readinessProbe").Line; got != 17 {
		t.Errorf("rollout readinessProbe at line %d, want 17", got)
	}
	if cw := inv.Workloads[2]; !cw.RunsToCompletion || cw.AtContainer(cw.Containers()[0]).Line != 38 {
		t.Errorf("job-template kind: runsToCompletion %v, container at line %d", cw.RunsToCompletion, cw.AtContainer(cw.Containers()[0]).Line)
	}
}
