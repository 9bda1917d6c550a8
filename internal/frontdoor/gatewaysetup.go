package frontdoor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// The gateway door's cluster-scoped set-up, installed once and left in place (every run checks
// it): the Gateway API CRDs, probegate's GatewayClass, and read access to GatewayClasses and
// Namespaces for every scenario's Traefik.
//
// Why one ClusterRoleBinding to every ServiceAccount: Traefik's Gateway provider lists and watches
// GatewayClasses and Namespaces, both cluster-scoped, whatever namespaces it is limited to. A
// RoleBinding (even of a ClusterRole) grants only inside its own namespace, so it cannot grant
// them; a ClusterRoleBinding per scenario could, but would be a cluster-scoped object to remove
// when each scenario ends. The subject that covers every scenario's ServiceAccount, whose
// namespace is new each time, is the group system:serviceaccounts; what it is granted is read-only
// and is only the names, labels and specs of GatewayClasses and Namespaces.
const (
	// GatewayAPIVersion is the Gateway API release whose CRDs (standard channel) the door installs:
	// the one Traefik v3.6.12 (TraefikImage) is built against (its go.mod).
	GatewayAPIVersion = "v1.4.0"
	gatewayAPIModule  = "sigs.k8s.io/gateway-api"
	// gatewayController is the controllerName Traefik's Gateway provider handles.
	gatewayController = "traefik.io/gateway-controller"
	// gatewayReader names the ClusterRole and ClusterRoleBinding that let every scenario's Traefik
	// read GatewayClasses and Namespaces.
	gatewayReader       = "probegate-gateway-reader"
	bundleVersionAnnot  = "gateway.networking.k8s.io/bundle-version"
	fieldManager        = "probegate" // deploy.FieldManager (deploy imports this package)
	crdEstablishTimeout = time.Minute
)

var (
	crdResource          = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gatewayClassResource = schema.GroupVersionResource{Group: gatewayGroup, Version: "v1", Resource: "gatewayclasses"}
	clusterRoleResource  = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	clusterBindResource  = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
)

// gatewayAPIDir is the directory of the Gateway API module at GatewayAPIVersion (a variable for
// tests).
var gatewayAPIDir = downloadGatewayAPI

// setupGateway installs what every scenario's gateway shares, idempotently: the Gateway API CRDs
// (left as they are when the cluster has them at GatewayAPIVersion), probegate's GatewayClass, and
// the read-only ClusterRole on GatewayClasses and Namespaces bound to every ServiceAccount.
func setupGateway(ctx context.Context, c Cluster) error {
	dir, err := gatewayAPIDir(ctx)
	if err != nil {
		return err
	}
	crds, err := readCRDs(filepath.Join(dir, "config", "crd", "standard"))
	if err != nil {
		return err
	}
	installed := 0
	for _, crd := range crds {
		applied, err := ensureCRD(ctx, c.Dynamic, crd)
		if err != nil {
			return err
		}
		if applied {
			installed++
		}
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, c.Dynamic, crd.GetName()); err != nil {
			return err
		}
	}
	if err := waitDiscovered(ctx, c.Client); err != nil {
		return err
	}
	for _, o := range []struct {
		res schema.GroupVersionResource
		obj *unstructured.Unstructured
	}{
		{gatewayClassResource, gatewayClassObject()},
		{clusterRoleResource, gatewayReaderRole()},
		{clusterBindResource, gatewayReaderBinding()},
	} {
		if _, err := c.Dynamic.Resource(o.res).Apply(ctx, o.obj.GetName(), o.obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
			return fmt.Errorf("apply %s %s: %w", o.obj.GetKind(), o.obj.GetName(), err)
		}
	}
	if c.Log != nil {
		c.Log.Info("gateway API set up", "version", GatewayAPIVersion, "crds", len(crds), "crdsInstalled", installed, "gatewayClass", GatewayClass)
	}
	return nil
}

// downloadGatewayAPI is the Gateway API module's directory in the Go module cache, downloaded when
// it is not there (as hack/images.sh gets Traefik's): the CRDs are read from the release itself.
// Read at run time rather than embedded by a generation script: the release's 700 kB of generated
// YAML stays out of the repository and the binary, and the Go toolchain it takes is one a run
// already needs (the bundled images, the Traefik image included, are built from Go sources); the
// version is pinned here, and a test checks it against Traefik's go.mod.
func downloadGatewayAPI(ctx context.Context) (string, error) {
	mod := gatewayAPIModule + "@" + GatewayAPIVersion
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", mod)
	cmd.Dir = os.TempDir() // outside any module: the version asked for is the one downloaded
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil && runErr == nil {
		return "", fmt.Errorf("go mod download %s: %w", mod, err)
	}
	switch {
	case info.Error != "":
		return "", fmt.Errorf("go mod download %s: %s", mod, info.Error)
	case runErr != nil:
		return "", fmt.Errorf("go mod download %s (the Gateway API CRDs come from its module): %w: %s", mod, runErr, firstLine(stderr.String()))
	case info.Dir == "":
		return "", fmt.Errorf("go mod download %s: no module directory", mod)
	}
	return info.Dir, nil
}

// readCRDs reads every CustomResourceDefinition file of dir (the release's config/crd/standard).
func readCRDs(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("gateway API CRDs: %w", err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("gateway API CRDs: %s: %w", filepath.Base(f), err)
		}
		o := &unstructured.Unstructured{Object: m}
		if o.GetKind() != "CustomResourceDefinition" {
			return nil, fmt.Errorf("gateway API CRDs: %s is a %s, not a CustomResourceDefinition", filepath.Base(f), o.GetKind())
		}
		unstructured.RemoveNestedField(o.Object, "status") // the API server's to write
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("gateway API CRDs: none in %s", dir)
	}
	return out, nil
}

// ensureCRD applies crd unless the cluster has it; one the cluster has from another Gateway API
// release is an error, not replaced: another user of the cluster may depend on it.
func ensureCRD(ctx context.Context, dyn dynamic.Interface, crd *unstructured.Unstructured) (applied bool, err error) {
	name := crd.GetName()
	cur, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := dyn.Resource(crdResource).Apply(ctx, name, crd, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
			return false, fmt.Errorf("install CRD %s: %w", name, err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("read CRD %s: %w", name, err)
	}
	if v := cur.GetAnnotations()[bundleVersionAnnot]; v != GatewayAPIVersion {
		return false, fmt.Errorf("CRD %s on the cluster is Gateway API %q: the gateway door needs %s (Traefik's): remove it, or use a cluster without it",
			name, v, GatewayAPIVersion)
	}
	return false, nil
}

// waitEstablished waits until the CRD name is established: its kind is served.
func waitEstablished(ctx context.Context, dyn dynamic.Interface, name string) error {
	return pollSetup(ctx, "CRD "+name, "not established", func(ctx context.Context) (bool, error) {
		cur, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		return err == nil && established(cur), err
	})
}

// waitDiscovered waits until the API server's discovery lists the Gateway API kinds the scenarios
// apply: the deployer's REST mapper reads discovery once, at the first install.
func waitDiscovered(ctx context.Context, client kubernetes.Interface) error {
	return pollSetup(ctx, "discovery of "+gatewayVersion, "Gateway and HTTPRoute not listed", func(ctx context.Context) (bool, error) {
		list, err := client.Discovery().ServerResourcesForGroupVersion(gatewayVersion)
		return err == nil && servesKinds(list, "Gateway", "HTTPRoute"), err
	})
}

// pollSetup polls check every 250 ms until it is done, for up to crdEstablishTimeout; the error
// names what and the last error check saw (notYet when it saw none).
func pollSetup(ctx context.Context, what, notYet string, check func(context.Context) (bool, error)) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, crdEstablishTimeout, true, func(ctx context.Context) (bool, error) {
		done, err := check(ctx)
		last = err
		return done, nil
	})
	if err == nil {
		return nil
	}
	if last == nil {
		last = errors.New(notYet)
	}
	return fmt.Errorf("%s within %s: %w", what, crdEstablishTimeout, last)
}

// servesKinds reports whether list has every one of kinds.
func servesKinds(list *metav1.APIResourceList, kinds ...string) bool {
	for _, k := range kinds {
		if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Kind == k }) {
			return false
		}
	}
	return true
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// probegateLabels mark what probegate installs.
func probegateLabels() map[string]any {
	return map[string]any{"app.kubernetes.io/part-of": "probegate"}
}

// gatewayClassObject is probegate's GatewayClass, handled by Traefik's Gateway controller; its
// label is the one each scenario's Traefik selects classes by (gatewayClassSelector).
func gatewayClassObject() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gatewayVersion,
		"kind":       "GatewayClass",
		"metadata":   map[string]any{"name": GatewayClass, "labels": probegateLabels()},
		"spec": map[string]any{
			"controllerName": gatewayController,
			"description":    "probegate: a Traefik in each scenario namespace",
		},
	}}
}

// gatewayReaderRole lets its subjects read GatewayClasses and Namespaces, and nothing else.
func gatewayReaderRole() *unstructured.Unstructured {
	read := []any{"get", "list", "watch"}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "ClusterRole",
		"metadata":   map[string]any{"name": gatewayReader, "labels": probegateLabels()},
		"rules": []any{
			map[string]any{"apiGroups": []any{gatewayGroup}, "resources": []any{"gatewayclasses"}, "verbs": read},
			map[string]any{"apiGroups": []any{""}, "resources": []any{"namespaces"}, "verbs": read},
		},
	}}
}

// gatewayReaderBinding binds gatewayReaderRole to every ServiceAccount (the group
// system:serviceaccounts): each scenario's Traefik has one, in a namespace new each time.
func gatewayReaderBinding() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "ClusterRoleBinding",
		"metadata":   map[string]any{"name": gatewayReader, "labels": probegateLabels()},
		"roleRef":    map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": gatewayReader},
		"subjects": []any{
			map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:serviceaccounts"},
		},
	}}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
