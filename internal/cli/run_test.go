package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/faults"
)

func writeRunInput(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Bad input ends with exit 2 and one line on stderr, before any cluster is contacted (there is
// none in a unit test: reaching for one would fail differently).
func TestRunBadInputExitsTwoWithOneLine(t *testing.T) {
	badScenario := writeRunInput(t, "mine.yaml", "name: mine\nload:\n  rate: fast\n  duration: 10s\nexpect: [no-liveness-restarts]\n")
	badTarget := writeRunInput(t, "target.yaml", "name: app\nport: 8080\n")
	oldTarget := writeRunInput(t, "target.yaml", "name: app\nimage: app:1\nport: 8080\n")
	appYAML, _ := filepath.Abs("../deploy/testdata/app/app.yaml")
	selectsNothing := writeRunInput(t, "target.yaml", "name: app\nmanifests: ["+appYAML+"]\nworkload: statefulset/db\nservice: web\n")
	noDependency := writeRunInput(t, "target.yaml", "name: app\nmanifests: ["+appYAML+"]\nworkload: deployment/web\nservice: web\n"+
		"dependencies: [{name: cache, service: redis, port: 6379}]\n")
	brokenKustomize := filepath.Join(t.TempDir(), "k")
	if err := os.Mkdir(brokenKustomize, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(brokenKustomize, "kustomization.yaml"), []byte("resources: [missing.yaml]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	grpcBase := "name: app\nmanifests: [" + appYAML + "]\nworkload: deployment/web\nservice: web\n"
	unknownProtocol := writeRunInput(t, "target.yaml", grpcBase+"protocol: h2\n")
	badMethod := writeRunInput(t, "target.yaml", grpcBase+"protocol: grpc\ngrpc: {method: Cart.Get}\n")
	badRequest := writeRunInput(t, "target.yaml", grpcBase+"protocol: grpc\ngrpc: {method: /shop.Cart/Get, request: '{id: 7'}\n")
	grpcTarget := writeRunInput(t, "target.yaml", grpcBase+"protocol: grpc\n")
	kustomizeError := writeRunInput(t, "target.yaml", "name: app\nmanifests: ["+brokenKustomize+"]\nworkload: deployment/web\nservice: web\n")
	noManifests := writeRunInput(t, "target.yaml", "name: app\nmanifests: [missing/]\nworkload: deployment/app\nservice: app\n")
	// A kubeconfig whose API server does not answer (nothing listens on 127.0.0.1:1).
	deadCluster := writeRunInput(t, "kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: dead, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: dead, context: {cluster: dead, user: u}}]
current-context: dead
`)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown scenario", []string{"run", "--scenario", "db-slowness", "--scenario", "nope"}, `probegate: unknown scenario "nope" (known: cold-start, `},
		{"unknown variant", []string{"run", "--variant", "flaky"}, `probegate: unknown variant "flaky" (known: good, `},
		{"malformed scenario file", []string{"run", "--scenario", badScenario}, "probegate: " + badScenario + `:3: load.rate: expected an integer, got string "fast"`},
		{"missing scenario file", []string{"run", "--scenario", "/nonexistent/x.yaml"}, "probegate: read scenario: open /nonexistent/x.yaml"},
		{"bad target file", []string{"run", "--target", badTarget}, "probegate: " + badTarget + ":1: manifests: missing required field"},
		{"first-format target file", []string{"run", "--target", oldTarget}, "probegate: " + oldTarget + ":2: image: no longer a target file field: name your own manifests"},
		{"target manifests missing", []string{"run", "--target", noManifests}, "probegate: target app: manifests: stat "},
		{"service selecting nothing", []string{"run", "--target", selectsNothing}, "probegate: target app: service web selects app=web, which the pods of statefulset/db do not carry"},
		{"missing dependency service", []string{"run", "--target", noDependency}, "probegate: target app: dependency cache: service redis: not in the manifests"},
		{"kustomize error", []string{"run", "--target", kustomizeError}, "probegate: target app: manifests: " + brokenKustomize + ": kustomize: "},
		{"unknown protocol", []string{"run", "--target", unknownProtocol}, "probegate: " + unknownProtocol + `:5: protocol: want http or grpc, got "h2"`},
		{"gRPC method not /package.Service/Method", []string{"run", "--target", badMethod}, "probegate: " + badMethod + `:6: grpc.method: want /package.Service/Method, got "Cart.Get"`},
		{"gRPC request not JSON", []string{"run", "--target", badRequest}, "probegate: " + badRequest + ":6: grpc.request: not JSON"},
		{"gRPC with in-cluster load", []string{"run", "--target", grpcTarget, "--load", "in-cluster"}, "probegate: --load in-cluster: target app speaks grpc, and the in-cluster load agents speak HTTP only: use --load host"},
		{"image without target", []string{"run", "--image", "a=b"}, "probegate: --image swaps images of your own manifests: it needs --target"},
		{"via without target", []string{"run", "--via", "ingress"}, "probegate: --via puts a front door of your own manifests in the path: it needs --target"},
		{"unknown via", []string{"run", "--target", grpcTarget, "--via", "nginx"}, `probegate: --via "nginx": want kube-proxy, ingress[=INGRESS] or gateway[=HTTPROUTE]`},
		{"via a door the manifests lack", []string{"run", "--target", grpcTarget, "--via", "ingress"}, "probegate: target app: --via: the manifests hold no Ingress for the load to come through"},
		{"malformed image swap", []string{"run", "--target", noManifests, "--image", "nginx"}, `probegate: --image "nginx": want OLD=NEW`},
		{"variant with target", []string{"run", "--target", badTarget, "--variant", "good"}, "probegate: --variant selects a bundled fixture variant"},
		{"unreachable cluster", []string{"run", "--scenario", "db-slowness", "--kubeconfig", deadCluster}, "probegate: cluster https://127.0.0.1:1 is unreachable: "},
		{"missing kubeconfig", []string{"run", "--kubeconfig", "/nonexistent/kubeconfig"}, "probegate: load kubeconfig /nonexistent/kubeconfig: "},
		{"bad parallel", []string{"run", "--parallel", "0"}, "probegate: --parallel 0: must be at least 1"},
		{"unknown flag", []string{"run", "--bogus"}, "probegate: unknown flag: --bogus"},
		{"unknown load", []string{"run", "--load", "remote"}, `probegate: --load "remote": want host or in-cluster`},
		{"agents without in-cluster load", []string{"run", "--load-agents", "3"}, "probegate: --load-agents needs --load in-cluster"},
		{"agent image on kind with host load", []string{"run", "--agent-image", "x:1"}, "probegate: --agent-image needs --load in-cluster or --kubeconfig (the node agent's image)"},
		{"negative agents", []string{"run", "--load", "in-cluster", "--load-agents", "-1"}, "probegate: --load-agents must be at least 1, got -1"},
		{"list bad output", []string{"list", "-o", "json"}, `probegate: -o "json": want name or wide`},
		{"replay missing", []string{"replay", "/nonexistent/report.json"}, "probegate: replay: open /nonexistent/report.json"},
		{"replay not a report", []string{"replay", badTarget}, "probegate: replay " + badTarget + ": decode report"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runMain(t, tc.args...)
			if code != ExitError {
				t.Errorf("exit %d, want %d (stderr %q)", code, ExitError, stderr)
			}
			if !strings.HasPrefix(stderr, tc.want) {
				t.Errorf("stderr\n got: %q\nwant: %q…", stderr, tc.want)
			}
			if n := strings.Count(stderr, "\n"); n != 1 {
				t.Errorf("stderr has %d lines, want 1: %q", n, stderr)
			}
		})
	}
}

func TestListFaultsFollowsTheRegistry(t *testing.T) {
	root := newRoot()
	var out strings.Builder
	root.SetOut(&out)
	root.SetArgs([]string{"list", "--faults", "-o", "name"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(out.String()), faults.Types(); !slices.Equal(got, want) {
		t.Fatalf("list --faults -o name = %v, want %v", got, want)
	}
	root = newRoot()
	out.Reset()
	root.SetOut(&out)
	root.SetArgs([]string{"list", "--faults"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "cold-start") || !strings.Contains(out.String(), "bootstrap*") {
		t.Fatalf("list --faults:\n%s", out.String())
	}
}

func TestListNames(t *testing.T) {
	root := newRoot()
	var out strings.Builder
	root.SetOut(&out)
	root.SetArgs([]string{"list", "-o", "name"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	names := strings.Fields(out.String())
	if len(names) != 16 || names[0] != "cold-start" || names[15] != "zone-spread" {
		t.Fatalf("list -o name = %v", names)
	}
}
