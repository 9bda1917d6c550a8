package lint

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/probegate/probegate/internal/testcluster"
)

// applyManifest creates the Deployments and Services of a testdata manifest in ns with zero
// replicas (no image is ever pulled). dryRun asks the API server to validate only.
func applyManifest(ctx context.Context, client kubernetes.Interface, ns, file string, dryRun bool) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	for _, d := range splitDocuments(data) {
		var tm metav1.TypeMeta
		if err := sigsyaml.Unmarshal(d.text, &tm); err != nil {
			return err
		}
		switch tm.Kind {
		case "":
		case "Deployment":
			var o appsv1.Deployment
			if err := sigsyaml.Unmarshal(d.text, &o); err != nil {
				return err
			}
			zero := int32(0)
			o.Spec.Replicas = &zero
			if _, err := client.AppsV1().Deployments(ns).Create(ctx, &o, opts); err != nil {
				return err
			}
		case "Service":
			var o corev1.Service
			if err := sigsyaml.Unmarshal(d.text, &o); err != nil {
				return err
			}
			if len(o.Spec.Ports) == 0 {
				o.Spec.Ports = []corev1.ServicePort{{Port: 80}}
			}
			if _, err := client.CoreV1().Services(ns).Create(ctx, &o, opts); err != nil {
				return err
			}
		default:
			return &InputError{Pos: Position{File: file}, Msg: "test applies only Deployments and Services, got " + tm.Kind}
		}
	}
	return nil
}

// findingKeys reduces findings to what must not depend on where they were read from.
func findingKeys(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.RuleID+" "+f.Severity.String()+" "+f.Object+" "+f.Message)
	}
	sort.Strings(out)
	return out
}

// TestIntegrationLintNamespace applies every rule's trigger manifest to a real API server, which
// fills in its defaults, then lints the live namespace: the findings must equal those read from the
// file. This checks lint's own defaulting (period 10s, timeout 1s, grace 30s, scheme HTTP …)
// against the API server's and proves the live path end to end.
func TestIntegrationLintNamespace(t *testing.T) {
	env := testcluster.Require(t)
	for _, r := range Rules() {
		if r.ID == "PG012" || r.ID == "PG016" {
			continue // rejected by the API server: TestIntegrationSuccessThresholdRejected
		}
		t.Run(r.Name, func(t *testing.T) {
			file := filepath.Join("testdata", "rules", r.Name, "trigger.yaml")
			ns := env.Namespace(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := applyManifest(ctx, env.Client, ns, file, false); err != nil {
				t.Fatalf("apply %s: %v", file, err)
			}
			inv, err := LoadNamespace(ctx, env.Client, ns)
			if err != nil {
				t.Fatal(err)
			}
			cfg := ruleConfigs[r.Name]
			live := Lint(inv, cfg)
			if len(only(live, r.ID)) == 0 {
				t.Errorf("no %s finding in the live namespace", r.ID)
			}
			_, fromFile := lintFile(t, file, cfg)
			got, want := findingKeys(live), findingKeys(fromFile)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("live findings differ from the file's\n--- live\n%s\n--- file\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestIntegrationSuccessThresholdRejected confirms PG012's claim on a real API server.
func TestIntegrationSuccessThresholdRejected(t *testing.T) {
	env := testcluster.Require(t)
	ns := env.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := applyManifest(ctx, env.Client, ns, filepath.Join("testdata", "rules", "success-threshold-not-one", "trigger.yaml"), true)
	if err == nil || !strings.Contains(err.Error(), "successThreshold") {
		t.Fatalf("API server accepted liveness successThreshold 2 (err %v)", err)
	}
	if err := applyManifest(ctx, env.Client, ns, filepath.Join("testdata", "rules", "success-threshold-not-one", "clean.yaml"), true); err != nil {
		t.Fatalf("API server rejected the clean manifest: %v", err)
	}
}
