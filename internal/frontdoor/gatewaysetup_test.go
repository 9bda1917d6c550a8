package frontdoor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
)

// modCache is the Go module cache's directory; the test skips when there is none.
func modCache(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Skip("no Go module cache")
	}
	return strings.TrimSpace(string(out))
}

// The Gateway API release the door installs is the one the Traefik probegate builds requires.
func TestGatewayAPIVersionIsTraefiks(t *testing.T) {
	common, err := os.ReadFile("../../hack/lib/common.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`TRAEFIK_VERSION="\$\{TRAEFIK_VERSION:-(v[^}]+)\}"`).FindSubmatch(common)
	if m == nil {
		t.Fatal("no TRAEFIK_VERSION in hack/lib/common.sh")
	}
	gomod, err := os.ReadFile(filepath.Join(modCache(t), "github.com/traefik/traefik/v3@"+string(m[1]), "go.mod"))
	if err != nil {
		t.Skipf("traefik %s is not in the module cache: %v", m[1], err)
	}
	if want := "\t" + gatewayAPIModule + " " + GatewayAPIVersion + "\n"; !strings.Contains(string(gomod), want) {
		t.Errorf("traefik %s's go.mod does not require %s %s", m[1], gatewayAPIModule, GatewayAPIVersion)
	}
}

// The release's standard channel holds the CRDs of every kind the provider watches.
func TestReadGatewayCRDs(t *testing.T) {
	dir := filepath.Join(modCache(t), gatewayAPIModule+"@"+GatewayAPIVersion, "config", "crd", "standard")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the Gateway API module is not in the module cache: %v", err)
	}
	crds, err := readCRDs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.GetName())
		if v := c.GetAnnotations()[bundleVersionAnnot]; v != GatewayAPIVersion {
			t.Errorf("%s: bundle version %q", c.GetName(), v)
		}
	}
	for _, want := range []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes", "referencegrants", "backendtlspolicies"} {
		if !slices.Contains(names, want+"."+gatewayGroup) {
			t.Errorf("no CRD %s in %v", want, names)
		}
	}
	if _, err := readCRDs(t.TempDir()); err == nil {
		t.Error("an empty directory gave no error")
	}
}

func crdObject(name, version string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion("apiextensions.k8s.io/v1")
	o.SetKind("CustomResourceDefinition")
	o.SetName(name)
	if version != "" {
		o.SetAnnotations(map[string]string{bundleVersionAnnot: version})
	}
	return o
}

// A CRD the cluster has at the door's release is left alone; one of another release is an error.
func TestEnsureCRDKeepsTheClusters(t *testing.T) {
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{crdResource: "CustomResourceDefinitionList"},
		crdObject("gateways."+gatewayGroup, GatewayAPIVersion), crdObject("httproutes."+gatewayGroup, "v1.2.1"))
	applied, err := ensureCRD(context.Background(), dyn, crdObject("gateways."+gatewayGroup, GatewayAPIVersion))
	if err != nil || applied {
		t.Errorf("same release: applied %v, err %v", applied, err)
	}
	_, err = ensureCRD(context.Background(), dyn, crdObject("httproutes."+gatewayGroup, GatewayAPIVersion))
	if err == nil || !strings.Contains(err.Error(), `CRD httproutes.gateway.networking.k8s.io on the cluster is Gateway API "v1.2.1": the gateway door needs v1.4.0`) {
		t.Errorf("other release: err = %v", err)
	}
	for _, a := range dyn.Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("the cluster's CRDs were changed: %s %s", a.GetVerb(), a.GetResource())
		}
	}
}

func TestGatewayReaderGrantsReadsOnly(t *testing.T) {
	rules, _, _ := unstructured.NestedSlice(gatewayReaderRole().Object, "rules")
	for _, r := range rules {
		r := r.(map[string]any)
		if !slices.Equal(r["verbs"].([]any), []any{"get", "list", "watch"}) {
			t.Errorf("rule %v", r)
		}
	}
	subjects, _, _ := unstructured.NestedSlice(gatewayReaderBinding().Object, "subjects")
	if len(subjects) != 1 || subjects[0].(map[string]any)["name"] != "system:serviceaccounts" {
		t.Errorf("subjects %v", subjects)
	}
	if c, _, _ := unstructured.NestedString(gatewayClassObject().Object, "spec", "controllerName"); c != gatewayController {
		t.Errorf("controller %q", c)
	}
	if gatewayClassObject().GetLabels()["app.kubernetes.io/part-of"] != "probegate" || !strings.HasSuffix(gatewayClassSelector, "=probegate") {
		t.Error("the class does not carry the label Traefik selects it by")
	}
}
