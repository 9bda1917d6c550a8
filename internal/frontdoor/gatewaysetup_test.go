package frontdoor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
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
		if _, ok := c.Object["status"]; ok {
			t.Errorf("%s: the file's status is applied", c.GetName())
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

// fakeGatewayAPI is a module directory holding two CRDs of the door's release.
func fakeGatewayAPI(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	std := filepath.Join(dir, "config", "crd", "standard")
	if err := os.MkdirAll(std, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, plural := range []string{"gateways", "httproutes"} {
		crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + plural + "." + gatewayGroup +
			"\n  annotations: {" + bundleVersionAnnot + ": " + GatewayAPIVersion + "}\nspec: {group: " + gatewayGroup + "}\n"
		if err := os.WriteFile(filepath.Join(std, gatewayGroup+"_"+plural+".yaml"), []byte(crd), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(std, "kustomization.yaml"), []byte("resources: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fakeCluster answers applies with what was applied, established, and records them; discovery lists
// the Gateway API's kinds.
func fakeCluster(t *testing.T, existing ...runtime.Object) (Cluster, *[]string) {
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{crdResource: "CustomResourceDefinitionList"}, existing...)
	var applied []string
	dyn.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		if p.GetPatchType() != types.ApplyPatchType {
			t.Errorf("%s %s: not a server-side apply", a.GetResource().Resource, p.GetName())
		}
		applied = append(applied, a.GetResource().Resource+"/"+p.GetName())
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(p.GetPatch()); err != nil {
			t.Fatal(err)
		}
		return true, o, nil
	})
	dyn.PrependReactor("get", "customresourcedefinitions", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.GetAction).GetName()
		if !slices.Contains(applied, "customresourcedefinitions/"+name) {
			return false, nil, nil // the tracker's: what the cluster had
		}
		o := crdObject(name, GatewayAPIVersion)
		_ = unstructured.SetNestedSlice(o.Object, []any{map[string]any{"type": "Established", "status": "True"}}, "status", "conditions")
		return true, o, nil
	})
	client := fake.NewClientset()
	client.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
		GroupVersion: gatewayVersion,
		APIResources: []metav1.APIResource{{Name: "gateways", Kind: "Gateway"}, {Name: "httproutes", Kind: "HTTPRoute"}},
	}}
	return Cluster{Client: client, Dynamic: dyn}, &applied
}

func TestSetupGatewayInstallsOnce(t *testing.T) {
	dir := fakeGatewayAPI(t)
	gatewayAPIDir = func(context.Context) (string, error) { return dir, nil }
	t.Cleanup(func() { gatewayAPIDir = downloadGatewayAPI })
	shared := []string{"gatewayclasses/" + GatewayClass, "clusterroles/" + gatewayReader, "clusterrolebindings/" + gatewayReader}

	c, applied := fakeCluster(t)
	if err := Setup(context.Background(), "gateway", c); err != nil {
		t.Fatal(err)
	}
	want := append([]string{"customresourcedefinitions/gateways." + gatewayGroup, "customresourcedefinitions/httproutes." + gatewayGroup}, shared...)
	if !slices.Equal(*applied, want) {
		t.Errorf("first run applied %v, want %v", *applied, want)
	}

	// A later run finds the CRDs at the release: only the class and the reader are applied again.
	established := func(name string) runtime.Object {
		o := crdObject(name, GatewayAPIVersion)
		_ = unstructured.SetNestedSlice(o.Object, []any{map[string]any{"type": "Established", "status": "True"}}, "status", "conditions")
		return o
	}
	c, applied = fakeCluster(t, established("gateways."+gatewayGroup), established("httproutes."+gatewayGroup))
	if err := Setup(context.Background(), "gateway", c); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(*applied, shared) {
		t.Errorf("later run applied %v, want %v", *applied, shared)
	}

	gatewayAPIDir = func(context.Context) (string, error) {
		return "", errors.New("go mod download sigs.k8s.io/gateway-api@v1.4.0: no network")
	}
	if err := Setup(context.Background(), "gateway", c); err == nil || !strings.Contains(err.Error(), "front door gateway: cluster set-up: go mod download") {
		t.Errorf("err = %v", err)
	}
	if err := Setup(context.Background(), "ingress", Cluster{}); err != nil {
		t.Errorf("the ingress door has no set-up: %v", err)
	}
}
