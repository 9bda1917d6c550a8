package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/probegate/probegate/internal/frontdoor"
	kustomizebuild "github.com/probegate/probegate/internal/kustomize"
	"github.com/probegate/probegate/internal/scenario"
)

// App is the user's application read from a target file: the objects of its manifests, ready to be
// applied into any namespace, and which of them is under test. Nothing in the objects is changed but
// what running offline and per scenario needs: image swaps, imagePullPolicy IfNotPresent, and (at
// install) the namespace, the workload's replicas and the dependency Services' selectors.
type App struct {
	Spec *scenario.TargetSpec
	// Objects are every object to apply, in the manifests' order (Namespace objects left out).
	Objects []*unstructured.Unstructured
	// Workload is the object under test; Selector its pods' matchLabels.
	Workload *unstructured.Unstructured
	Selector map[string]string
	// Container is the container under test.
	Container string
	// Service routes to the workload; Port is the port the load uses.
	Service *corev1.Service
	Port    corev1.ServicePort
	// Images are every image the pod templates run (after swaps), sorted; Archives maps an image
	// that comes from a tarball to the tarball's path.
	Images   []string
	Archives map[string]string
	// Dependencies are the declared dependencies with their Services.
	Dependencies []AppDependency
	// Door is how the load reaches the pods (the target file's frontDoor), resolved against the
	// manifests.
	Door frontdoor.Route
	// Skipped names objects left out (Namespace objects: each scenario brings its own).
	Skipped []string
}

// AppDependency is a declared dependency and the Service the app reaches it by.
type AppDependency struct {
	scenario.Dependency
	Service *corev1.Service
}

// clusterScoped are kinds that cannot be applied per scenario namespace.
var clusterScoped = []string{
	"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "PersistentVolume", "StorageClass",
	"PriorityClass", "APIService", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
	"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "IngressClass", "RuntimeClass",
	"CSIDriver", "Node",
}

// LoadApp reads the target's manifests (files, directories, kustomizations), applies the image
// swaps (swaps, from the command line, before spec.Images), and checks that the objects the spec names exist and
// fit together: the workload and its container, a Service that selects the workload's pods, its
// port, and every dependency's Service and port. Errors are one line naming the file or object.
func LoadApp(spec *scenario.TargetSpec, swaps map[string]string) (*App, error) {
	app := &App{Spec: spec, Archives: map[string]string{}}
	for _, path := range spec.ManifestPaths() {
		objs, err := readManifests(path)
		if err != nil {
			return nil, fmt.Errorf("target %s: manifests: %w", spec.Name, err)
		}
		for _, o := range objs {
			switch {
			case o.GetKind() == "Namespace":
				app.Skipped = append(app.Skipped, "namespace/"+o.GetName())
			case slices.Contains(clusterScoped, o.GetKind()):
				return nil, fmt.Errorf("target %s: manifests: %s %s is cluster-scoped: it cannot be applied into each scenario's namespace (install it once yourself, or leave it out)",
					spec.Name, o.GetKind(), o.GetName())
			default:
				app.Objects = append(app.Objects, o)
			}
		}
	}
	if len(app.Objects) == 0 {
		return nil, fmt.Errorf("target %s: manifests: no objects in %s", spec.Name, strings.Join(spec.Manifests, ", "))
	}
	all := map[string]string{}
	for k, v := range spec.Images {
		all[k] = v
	}
	for k, v := range swaps {
		all[k] = v
	}
	// The command line's swaps win over the file's, whichever of the two is more specific.
	swapOf := func(img string) (string, string) {
		if to, from := swapFor(swaps, img); from != "" {
			return to, from
		}
		return swapFor(spec.Images, img)
	}
	used := map[string]bool{}
	seen := map[string]bool{}
	for _, o := range app.Objects {
		err := eachContainer(o, func(c map[string]any) error {
			img, _ := c["image"].(string)
			if img == "" {
				return fmt.Errorf("%s: container %v has no image", describeObj(o), c["name"])
			}
			for from := range all {
				if _, f := swapFor(map[string]string{from: ""}, img); f != "" {
					used[from] = true
				}
			}
			if to, from := swapOf(img); from != "" {
				if isArchive(to) {
					ref, err := archiveRef(to)
					if err != nil {
						return fmt.Errorf("image swap %s=%s: %w", from, to, err)
					}
					app.Archives[ref] = to
					to = ref
				}
				img = to
			}
			c["image"] = img
			c["imagePullPolicy"] = string(corev1.PullIfNotPresent)
			if !seen[img] {
				seen[img] = true
				app.Images = append(app.Images, img)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", spec.Name, err)
		}
	}
	sort.Strings(app.Images)
	for from := range all {
		if !used[from] {
			return nil, fmt.Errorf("target %s: image swap %s: no container of the manifests runs that image (they run: %s)",
				spec.Name, from, strings.Join(app.Images, ", "))
		}
	}
	if err := app.resolve(); err != nil {
		return nil, fmt.Errorf("target %s: %w", spec.Name, err)
	}
	return app, nil
}

// resolve finds and checks the objects the spec names.
func (app *App) resolve() error {
	spec := app.Spec
	var workloads []string
	for _, o := range app.Objects {
		if o.GetKind() == "Deployment" || o.GetKind() == "StatefulSet" {
			workloads = append(workloads, strings.ToLower(o.GetKind())+"/"+o.GetName())
		}
		if o.GetKind() == spec.Workload.Kind && o.GetName() == spec.Workload.Name {
			app.Workload = o
		}
	}
	if app.Workload == nil {
		return fmt.Errorf("workload %s: not in the manifests (they hold: %s)", spec.Workload, orNone(workloads))
	}
	sel, _, _ := unstructured.NestedStringMap(app.Workload.Object, "spec", "selector", "matchLabels")
	if len(sel) == 0 {
		return fmt.Errorf("workload %s: no spec.selector.matchLabels", spec.Workload)
	}
	app.Selector = sel
	labels, _, _ := unstructured.NestedStringMap(app.Workload.Object, "spec", "template", "metadata", "labels")
	var names []string
	ctrs, _, _ := unstructured.NestedSlice(app.Workload.Object, "spec", "template", "spec", "containers")
	for _, c := range ctrs {
		if m, ok := c.(map[string]any); ok {
			if n, _ := m["name"].(string); n != "" {
				names = append(names, n)
			}
		}
	}
	switch {
	case len(names) == 0:
		return fmt.Errorf("workload %s: no containers", spec.Workload)
	case spec.Container == "":
		app.Container = names[0]
	case slices.Contains(names, spec.Container):
		app.Container = spec.Container
	default:
		return fmt.Errorf("workload %s: no container %q (it has: %s)", spec.Workload, spec.Container, strings.Join(names, ", "))
	}

	svc, err := app.service(spec.Service)
	if err != nil {
		return err
	}
	if len(svc.Spec.Selector) == 0 {
		return fmt.Errorf("service %s: no selector: it routes to no pods the harness can follow", svc.Name)
	}
	for k, v := range svc.Spec.Selector {
		if labels[k] != v {
			return fmt.Errorf("service %s selects %s, which the pods of %s do not carry (their labels: %s): it would route to nothing",
				svc.Name, formatLabels(svc.Spec.Selector), spec.Workload, formatLabels(labels))
		}
	}
	port, err := servicePort(svc, spec.Port)
	if err != nil {
		return err
	}
	app.Service, app.Port = svc, port

	for _, d := range spec.Dependencies {
		dsvc, err := app.service(d.Service)
		if err != nil {
			return fmt.Errorf("dependency %s: %w", d.Name, err)
		}
		if len(dsvc.Spec.Selector) == 0 {
			return fmt.Errorf("dependency %s: service %s has no selector: there are no pods to put toxiproxy in front of", d.Name, d.Service)
		}
		if _, err := servicePort(dsvc, strconv.Itoa(d.Port)); err != nil {
			return fmt.Errorf("dependency %s: %w", d.Name, err)
		}
		if dsvc.Spec.ClusterIP == corev1.ClusterIPNone {
			return fmt.Errorf("dependency %s: service %s is headless: clients reach its pods directly, so toxiproxy cannot be put on the path (not supported yet)", d.Name, d.Service)
		}
		if dsvc.Name == svc.Name {
			return fmt.Errorf("dependency %s: service %s is the target's own service", d.Name, d.Service)
		}
		app.Dependencies = append(app.Dependencies, AppDependency{Dependency: d, Service: dsvc})
	}
	var door scenario.FrontDoor
	if spec.FrontDoor != nil {
		door = *spec.FrontDoor
	}
	paths := []string{spec.Requests.Default}
	if p := spec.Requests.TakesPath(time.Second); p != "" {
		paths = append(paths, p)
	}
	app.Door, err = frontdoor.Resolve(frontdoor.Input{Door: door, Objects: app.Objects, Service: svc, Port: port,
		Paths: paths, Protocol: spec.Protocol})
	return err
}

// service returns the typed Service of the manifests named name.
func (app *App) service(name string) (*corev1.Service, error) {
	var names []string
	for _, o := range app.Objects {
		if o.GetKind() != "Service" {
			continue
		}
		names = append(names, o.GetName())
		if o.GetName() == name {
			svc := &corev1.Service{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, svc); err != nil {
				return nil, fmt.Errorf("service %s: %w", name, err)
			}
			return svc, nil
		}
	}
	return nil, fmt.Errorf("service %s: not in the manifests (they hold: %s)", name, orNone(names))
}

// servicePort finds a Service port by name or number; "" is the first.
func servicePort(svc *corev1.Service, want string) (corev1.ServicePort, error) {
	if len(svc.Spec.Ports) == 0 {
		return corev1.ServicePort{}, fmt.Errorf("service %s: no ports", svc.Name)
	}
	if want == "" {
		return svc.Spec.Ports[0], nil
	}
	var have []string
	for _, p := range svc.Spec.Ports {
		if p.Name == want || strconv.Itoa(int(p.Port)) == want {
			return p, nil
		}
		have = append(have, fmt.Sprintf("%s/%d", p.Name, p.Port))
	}
	return corev1.ServicePort{}, fmt.Errorf("service %s: no port %q (it has: %s)", svc.Name, want, strings.Join(have, ", "))
}

// readManifests reads a file, a directory of manifests, or a kustomization directory.
func readManifests(path string) ([]*unstructured.Unstructured, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return decodeManifests(path, data)
	}
	for _, k := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, err := os.Stat(filepath.Join(path, k)); err == nil {
			return kustomize(path)
		}
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		objs, err := readManifests(filepath.Join(path, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no .yaml, .yml or .json manifests in the directory", path)
	}
	return out, nil
}

// kustomize renders a kustomization directory in-process.
func kustomize(dir string) ([]*unstructured.Unstructured, error) {
	data, err := kustomizebuild.Build(dir)
	if err != nil {
		return nil, err
	}
	return decodeManifests(dir+" (kustomize)", data)
}

// decodeManifests splits multi-document YAML (or JSON) into objects; List objects are expanded.
// Numbers decode as the API server's would (integers as int64).
func decodeManifests(name string, data []byte) ([]*unstructured.Unstructured, error) {
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		raw, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, doc, err)
		}
		js, err := utilyaml.ToJSON(raw)
		if err != nil {
			hint := ""
			if bytes.Contains(raw, []byte("{{")) {
				hint = " (it looks like an unrendered Helm template: render it with helm template first)"
			}
			return nil, fmt.Errorf("%s: document %d: %v%s", name, doc, err, hint)
		}
		if t := bytes.TrimSpace(js); len(t) == 0 || bytes.Equal(t, []byte("null")) || bytes.Equal(t, []byte("{}")) {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("%s: document %d: %v", name, doc, err)
		}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", name, doc, err)
			}
			for i := range list.Items {
				out = append(out, &list.Items[i])
			}
			continue
		}
		if u.GetName() == "" {
			return nil, fmt.Errorf("%s: document %d: %s has no metadata.name", name, doc, u.GetKind())
		}
		out = append(out, u)
	}
	return out, nil
}

// eachContainer calls fn for every container and init container of o's pod template (or of o, a
// Pod), in place.
func eachContainer(o *unstructured.Unstructured, fn func(c map[string]any) error) error {
	spec := podSpec(o)
	if spec == nil {
		return nil
	}
	for _, key := range []string{"initContainers", "containers"} {
		list, _ := spec[key].([]any)
		for _, item := range list {
			c, ok := item.(map[string]any)
			if !ok {
				continue
			}
			if err := fn(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// podSpec is o's pod spec (as a mutable map), or nil for objects that run no pods.
func podSpec(o *unstructured.Unstructured) map[string]any {
	var path []string
	switch o.GetKind() {
	case "Pod":
		path = []string{"spec"}
	case "CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController":
		path = []string{"spec", "template", "spec"}
	default:
		return nil
	}
	m := o.Object
	for _, k := range path {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// swapFor returns the replacement of img and the swap key that matched: an exact reference, or a
// key without tag or digest matching img's repository.
func swapFor(swaps map[string]string, img string) (to, from string) {
	if v, ok := swaps[img]; ok {
		return v, img
	}
	repo := img
	if i := strings.Index(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	if v, ok := swaps[repo]; ok {
		return v, repo
	}
	return "", ""
}

func describeObj(o *unstructured.Unstructured) string {
	return strings.ToLower(o.GetKind()) + "/" + o.GetName()
}

func formatLabels(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + m[k])
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}
