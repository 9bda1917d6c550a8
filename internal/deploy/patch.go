package deploy

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"
)

// patchSchemas are the workload kinds a patch can be applied to, with the typed object whose
// patch strategies (containers merged by name) the merge follows.
var patchSchemas = map[string]any{
	"Deployment":  appsv1.Deployment{},
	"StatefulSet": appsv1.StatefulSet{},
}

// patchJSON reads a strategic-merge patch (YAML or JSON, as `kubectl patch --type strategic`
// takes it and `probegate tune -o patch` writes it) for workload kind/name. A patch that names
// another kind or name is an error: it was meant for something else.
func patchJSON(patch []byte, kind, name string) ([]byte, error) {
	if _, ok := patchSchemas[kind]; !ok {
		return nil, fmt.Errorf("patch: %s workloads cannot be patched (want Deployment or StatefulSet)", kind)
	}
	js, err := yaml.YAMLToJSON(patch)
	if err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, fmt.Errorf("patch: not one object: %w", err)
	}
	if (head.Kind != "" && head.Kind != kind) || (head.Metadata.Name != "" && head.Metadata.Name != name) {
		return nil, fmt.Errorf("patch: it is for %s/%s, the workload is %s/%s", head.Kind, head.Metadata.Name, kind, name)
	}
	return js, nil
}

// mergePatch applies patch to the JSON of a kind workload with Kubernetes' strategic merge:
// containers merge by name (only the named container's fields change), maps merge, null deletes.
func mergePatch(obj []byte, kind, name string, patch []byte) ([]byte, error) {
	js, err := patchJSON(patch, kind, name)
	if err != nil {
		return nil, err
	}
	out, err := strategicpatch.StrategicMergePatch(obj, js, patchSchemas[kind])
	if err != nil {
		return nil, fmt.Errorf("patch %s/%s: %w", kind, name, err)
	}
	return out, nil
}

// patchDeployment applies a strategic-merge patch to d in place.
func patchDeployment(d *appsv1.Deployment, patch []byte) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("patch deployment %s: %w", d.Name, err)
	}
	out, err := mergePatch(raw, "Deployment", d.Name, patch)
	if err != nil {
		return err
	}
	var merged appsv1.Deployment
	if err := json.Unmarshal(out, &merged); err != nil {
		return fmt.Errorf("patch deployment %s: %w", d.Name, err)
	}
	*d = merged
	return nil
}

// patchUnstructured applies a strategic-merge patch to a Deployment or StatefulSet in place.
func patchUnstructured(o *unstructured.Unstructured, patch []byte) error {
	raw, err := o.MarshalJSON()
	if err != nil {
		return fmt.Errorf("patch %s: %w", describeObj(o), err)
	}
	out, err := mergePatch(raw, o.GetKind(), o.GetName(), patch)
	if err != nil {
		return err
	}
	merged := &unstructured.Unstructured{}
	if err := merged.UnmarshalJSON(out); err != nil {
		return fmt.Errorf("patch %s: %w", describeObj(o), err)
	}
	o.Object = merged.Object
	return nil
}
