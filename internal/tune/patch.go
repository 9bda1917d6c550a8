package tune

import (
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// WritePatch prints one strategic-merge patch per workload with a change (kubectl patch
// --type strategic, or a kustomize patch): only the changed fields, the container named by its
// merge key. Changes that need a person (NotPatched) are listed as comments.
func WritePatch(w io.Writer, r Result) error {
	var b strings.Builder
	n := 0
	for _, wl := range r.Workloads {
		pod, ctr := map[string]any{}, map[string]any{"name": wl.Container}
		var comments []string
		for _, rec := range wl.Recommendations {
			if rec.Status != Change && rec.Status != Add {
				continue
			}
			if rec.patch == nil {
				comments = append(comments, fmt.Sprintf("# %s → %s not patched: %s", rec.Field, rec.Recommended, rec.NotPatched))
				continue
			}
			dst := pod
			if rec.patch.container {
				dst = ctr
			}
			set(dst, rec.patch.path, rec.patch.value)
		}
		if len(pod) == 0 && len(ctr) == 1 && len(comments) == 0 {
			continue
		}
		if len(ctr) > 1 {
			pod["containers"] = []any{ctr}
		}
		doc := map[string]any{
			"apiVersion": "apps/v1",
			"kind":       wl.Kind,
			"metadata":   map[string]any{"name": wl.Name},
			"spec":       map[string]any{"template": map[string]any{"spec": pod}},
		}
		raw, err := yaml.Marshal(doc)
		if err != nil {
			return fmt.Errorf("encode the patch for %s/%s: %w", wl.Kind, wl.Name, err)
		}
		if n > 0 {
			b.WriteString("---\n")
		}
		n++
		fmt.Fprintf(&b, "# probegate tune: %s/%s container %s (%s)\n", strings.ToLower(wl.Kind), wl.Name, wl.Container, wl.Target)
		fmt.Fprintf(&b, "# kubectl patch %s %s --type strategic --patch-file THIS_FILE\n", strings.ToLower(wl.Kind), wl.Name)
		for _, c := range comments {
			b.WriteString(c + "\n")
		}
		if len(pod) > 0 {
			b.Write(raw)
		}
	}
	if n == 0 {
		b.WriteString("# probegate tune: no change to patch\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// set puts v at path in m, creating the maps on the way.
func set(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}
