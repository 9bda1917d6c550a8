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
		var comments []string
		for _, rec := range wl.Recommendations {
			if (rec.Status == Change || rec.Status == Add) && rec.patch == nil {
				comments = append(comments, fmt.Sprintf("# %s → %s not patched: %s", rec.Field, rec.Recommended, rec.NotPatched))
			}
		}
		raw, err := WorkloadPatch(wl, wl.Recommendations)
		if err != nil {
			return err
		}
		if raw == nil && len(comments) == 0 {
			continue
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
		b.Write(raw)
	}
	if n == 0 {
		b.WriteString("# probegate tune: no change to patch\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WorkloadPatch is the strategic-merge patch (YAML) of the patchable changes among recs, which
// belong to w; nil when none of them is one.
func WorkloadPatch(w Workload, recs []Recommendation) ([]byte, error) {
	pod, ctr := map[string]any{}, map[string]any{"name": w.Container}
	for _, rec := range recs {
		if !rec.Patched() {
			continue
		}
		dst := pod
		if rec.patch.container {
			dst = ctr
		}
		set(dst, rec.patch.path, rec.patch.value)
	}
	if len(ctr) > 1 {
		pod["containers"] = []any{ctr}
	}
	if len(pod) == 0 {
		return nil, nil
	}
	doc := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       w.Kind,
		"metadata":   map[string]any{"name": w.Name},
		"spec":       map[string]any{"template": map[string]any{"spec": pod}},
	}
	raw, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode the patch for %s/%s: %w", w.Kind, w.Name, err)
	}
	return raw, nil
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
