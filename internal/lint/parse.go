package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// document is one YAML document of a file and the file line its text starts on.
type document struct {
	text      []byte
	firstLine int
}

// splitDocuments cuts a YAML stream at "---" separator lines, keeping each document's first line
// number so errors and findings can name the line in the file.
func splitDocuments(data []byte) []document {
	var docs []document
	lines := bytes.SplitAfter(data, []byte("\n"))
	start, first := 0, 1
	flush := func(end int) {
		var buf bytes.Buffer
		for _, l := range lines[start:end] {
			buf.Write(l)
		}
		docs = append(docs, document{text: buf.Bytes(), firstLine: first})
	}
	for i, l := range lines {
		t := bytes.TrimRight(l, "\r\n")
		if isSeparator(t) {
			flush(i)
			start, first = i+1, i+2
			// "--- {…}" puts content on the separator line itself: keep it as the document's first line.
			if rest := bytes.TrimSpace(t[3:]); len(rest) > 0 && rest[0] != '#' {
				lines[i] = append(bytes.Repeat([]byte(" "), 4), t[4:]...)
				lines[i] = append(lines[i], '\n')
				start, first = i, i+1
			}
		}
	}
	flush(len(lines))
	return docs
}

func isSeparator(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	return len(line) == 3 || line[3] == ' ' || line[3] == '\t'
}

// parseInto decodes every document of file into inv. A document that cannot be read is recorded in
// inv.Problems and the next one is read: one bad document never hides the findings of the others.
// A file that holds no object at all (empty, or only comments and separators) is a problem too: a
// manifest that says nothing is more likely a wrong path or a failed render than intended.
func parseInto(inv *Inventory, file string, data []byte) {
	before := inv.objects()
	for _, d := range splitDocuments(data) {
		if err := parseDocument(inv, file, d); err != nil {
			inv.Problems = append(inv.Problems, helmHint(err, d))
		}
	}
	if inv.objects() == before {
		inv.Problems = append(inv.Problems, &InputError{Pos: Position{File: file}, Msg: "no Kubernetes object in it (the file is empty or holds only comments)"})
	}
}

// objects counts what has been read into inv so far: objects, and documents that could not be read.
func (inv *Inventory) objects() int {
	return len(inv.Workloads) + len(inv.Services) + len(inv.Skipped) + len(inv.Problems)
}

// parseDocument decodes one document into inv.
func parseDocument(inv *Inventory, file string, d document) *InputError {
	var top yaml.Node
	if err := yaml.Unmarshal(d.text, &top); err != nil {
		return yamlError(file, d.firstLine, err)
	}
	if top.Kind == 0 || len(top.Content) == 0 {
		return nil // only comments or blank lines
	}
	root := top.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil
	}
	pos := Position{File: file, Line: d.firstLine + root.Line - 1}
	if err := duplicateKey(root, file, d.firstLine-1); err != nil {
		return err
	}
	if root.Kind != yaml.MappingNode {
		return &InputError{Pos: pos, Msg: "document is not a Kubernetes object (expected a mapping with apiVersion and kind)"}
	}
	doc := &docNode{root: root, firstLine: d.firstLine}
	return decodeObject(inv, doc, pos, d.text)
}

// helmDirective matches a Go template action where YAML expects a key or a value: "{{ .Values.x }}",
// "{{- if …}}", "{{ include … }}".
var helmDirective = regexp.MustCompile(`(?m)^\s*(-\s+)?([\w.-]+:\s*)?["']?\{\{-?\s*(\.|if|else|end|range|with|include|template|define|toYaml|tpl|\$)`)

// helmHint rewrites the error of a document that holds template actions, at the first action's
// line: the file is a Helm chart template (or another text template) that has not been rendered.
func helmHint(err *InputError, d document) *InputError {
	loc := helmDirective.FindIndex(d.text)
	if loc == nil {
		return err
	}
	line := d.firstLine + bytes.Count(d.text[:loc[0]], []byte("\n"))
	return &InputError{Pos: Position{File: err.Pos.File, Line: line}, Msg: "looks like an unrendered Helm template ({{ … }} actions): run helm template first and lint its output"}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlError turns a YAML syntax error into an InputError at its line in the file.
func yamlError(file string, firstLine int, err error) *InputError {
	msg := err.Error()
	pos := Position{File: file, Line: firstLine}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		pos.Line = firstLine + n - 1
		msg = msg[len(m[0]):]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	return &InputError{Pos: pos, Msg: "invalid YAML: " + strings.ReplaceAll(msg, "\n", " ")}
}

// duplicateKey finds a mapping key given twice, which YAML decoders silently resolve to the last
// value. offset turns document lines into file lines.
func duplicateKey(n *yaml.Node, file string, offset int) *InputError {
	if n.Kind == yaml.MappingNode {
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if first, dup := seen[k.Value]; dup {
				return &InputError{Pos: Position{File: file, Line: offset + k.Line}, Msg: fmt.Sprintf("duplicate key %q (first at line %d)", k.Value, offset+first)}
			}
			seen[k.Value] = k.Line
		}
	}
	for _, c := range n.Content {
		if err := duplicateKey(c, file, offset); err != nil {
			return err
		}
	}
	return nil
}

// skippedKinds carry no pod template and no traffic policy lint checks; they are read and left alone
// so a whole manifest directory can be linted.
var skippedKinds = map[string]bool{
	"ConfigMap": true, "Secret": true, "ServiceAccount": true, "Namespace": true,
	"Role": true, "RoleBinding": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"Ingress": true, "IngressClass": true, "NetworkPolicy": true, "PodDisruptionBudget": true,
	"HorizontalPodAutoscaler": true, "PersistentVolumeClaim": true, "PersistentVolume": true,
	"StorageClass": true, "LimitRange": true, "ResourceQuota": true, "PriorityClass": true,
	"Endpoints": true, "EndpointSlice": true, "CustomResourceDefinition": true,
}

// podTemplateKinds maps the workload kinds lint reads to their apiVersion and the path from the
// document root to the pod spec.
var podTemplateKinds = map[string]struct {
	apiVersion string
	podPath    []any
}{
	"Deployment":  {"apps/v1", []any{"spec", "template", "spec"}},
	"StatefulSet": {"apps/v1", []any{"spec", "template", "spec"}},
	"DaemonSet":   {"apps/v1", []any{"spec", "template", "spec"}},
	"ReplicaSet":  {"apps/v1", []any{"spec", "template", "spec"}},
	"Job":         {"batch/v1", []any{"spec", "template", "spec"}},
	"CronJob":     {"batch/v1", []any{"spec", "jobTemplate", "spec", "template", "spec"}},
	"Pod":         {"v1", []any{"spec"}},
}

// strictGroups are the API versions whose kinds lint knows: an unknown kind there is a typo, not a
// custom resource.
var strictGroups = map[string]bool{"apps/v1": true, "batch/v1": true}

// decodeObject decodes one object (raw is its YAML or JSON text) into inv. Kinds lint does not know
// are workloads when they carry a pod template (Argo Rollouts, Knative Services, old apiVersions),
// and are otherwise skipped and counted.
func decodeObject(inv *Inventory, doc *docNode, pos Position, raw []byte) *InputError {
	tm, ierr := typeMeta(doc, pos, raw)
	if ierr != nil {
		return ierr
	}
	if tm.Kind == "" {
		return &InputError{Pos: pos, Msg: "object has no kind"}
	}
	if tm.APIVersion == "" {
		return &InputError{Pos: pos, Msg: fmt.Sprintf("%s has no apiVersion", tm.Kind)}
	}
	if skippedKinds[tm.Kind] {
		inv.Skipped = append(inv.Skipped, Skipped{Kind: tm.Kind, Name: objectName(doc, raw), Pos: pos})
		if tm.Kind == "ConfigMap" && tm.APIVersion == "v1" {
			inv.ConfigMaps = append(inv.ConfigMaps, configMapOf(doc, pos, raw))
		}
		return nil
	}
	switch {
	case isList(doc, tm.Kind):
		return decodeList(inv, doc, pos, raw)
	}
	switch tm.Kind {
	case "Service":
		if tm.APIVersion != "v1" {
			return unsupportedVersion(pos, tm)
		}
		var svc corev1.Service
		if err := sigsyaml.Unmarshal(raw, &svc); err != nil {
			return decodeError(doc, pos, err)
		}
		if svc.Name == "" {
			return &InputError{Pos: pos, Msg: "Service has no metadata.name"}
		}
		inv.Services = append(inv.Services, &Service{Name: svc.Name, Namespace: svc.Namespace, Spec: svc.Spec, Pos: pos, doc: doc})
		return nil
	}
	var (
		w   *Workload
		err error
	)
	kind, known := podTemplateKinds[tm.Kind]
	podPath := kind.podPath
	if known && tm.APIVersion == kind.apiVersion {
		// The typed object carries what the shape would: one decode, not two.
		w, err = decodeWorkload(tm.Kind, raw)
	} else {
		var shape objectShape
		if err := sigsyaml.Unmarshal(raw, &shape); err != nil {
			return decodeError(doc, pos, err)
		}
		switch {
		case shape.podPath() != nil:
			podPath = shape.podPath()
			w, err = decodeGenericWorkload(tm.Kind, shape)
			if err == nil {
				shape.apply(w)
			}
		case known:
			return unsupportedVersion(pos, tm)
		case strictGroups[tm.APIVersion]:
			return &InputError{Pos: pos, Msg: fmt.Sprintf("unknown kind %q in %s", tm.Kind, tm.APIVersion)}
		default:
			inv.Skipped = append(inv.Skipped, Skipped{Kind: tm.Kind, Name: objectName(doc, raw), Pos: pos, Unknown: true})
			return nil
		}
	}
	if err != nil {
		return decodeError(doc, pos, err)
	}
	if w.Name == "" {
		return &InputError{Pos: pos, Msg: fmt.Sprintf("%s has no metadata.name", tm.Kind)}
	}
	w.Pos, w.doc, w.podPath = pos, doc, podPath
	inv.Workloads = append(inv.Workloads, w)
	return nil
}

// typeMeta reads apiVersion and kind. They are read from the parsed YAML tree when it is plain (no
// merge keys), which spares a second full decode of every document; otherwise, and for objects with
// no tree, from raw.
func typeMeta(doc *docNode, pos Position, raw []byte) (metav1.TypeMeta, *InputError) {
	var tm metav1.TypeMeta
	if doc == nil || doc.root == nil || doc.root.Kind != yaml.MappingNode || childAt(doc.root, "<<") != nil {
		if err := sigsyaml.Unmarshal(raw, &tm); err != nil {
			return tm, decodeError(doc, pos, err)
		}
		return tm, nil
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"apiVersion", &tm.APIVersion}, {"kind", &tm.Kind}} {
		v, err := scalarString(doc, pos, f.key)
		if err != nil {
			return tm, err
		}
		*f.dst = v
	}
	return tm, nil
}

// scalarString returns the top-level field key of doc as a string ("" when absent or null), or an
// error naming its line when it is a mapping or a sequence.
func scalarString(doc *docNode, pos Position, key string) (string, *InputError) {
	n := childAt(doc.root, key)
	if n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch {
	case n == nil:
		return "", nil
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return "", nil
	case n.Kind == yaml.ScalarNode:
		return n.Value, nil
	}
	got := "object"
	if n.Kind == yaml.SequenceNode {
		got = "array"
	}
	pos.Line = doc.firstLine + n.Line - 1
	return "", &InputError{Pos: pos, Msg: fmt.Sprintf("field %s: got a %s, want string", key, got)}
}

// objectName reads metadata.name, or "".
func objectName(doc *docNode, raw []byte) string {
	if doc != nil && doc.root != nil {
		if n := childAt(doc.root, "metadata", "name"); n != nil && n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
			return n.Value
		}
	}
	var m metav1.PartialObjectMetadata
	_ = sigsyaml.Unmarshal(raw, &m)
	return m.Name
}

// configMapOf reads a ConfigMap's name, namespace and text data from the document's YAML tree (no
// second decode of what may be a large object), or from raw when there is no tree.
func configMapOf(doc *docNode, pos Position, raw []byte) *ConfigMap {
	cm := &ConfigMap{Name: objectName(doc, raw), Pos: pos, Data: map[string]string{}}
	if doc == nil || doc.root == nil {
		var obj corev1.ConfigMap
		_ = sigsyaml.Unmarshal(raw, &obj) // unreadable data leaves the ConfigMap empty: no script to read
		cm.Namespace = obj.Namespace
		for k, v := range obj.Data {
			cm.Data[k] = v
		}
		return cm
	}
	if n := childAt(doc.root, "metadata", "namespace"); n != nil && n.Kind == yaml.ScalarNode {
		cm.Namespace = n.Value
	}
	if data := childAt(doc.root, "data"); data != nil && data.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(data.Content); i += 2 {
			if v := data.Content[i+1]; v.Kind == yaml.ScalarNode {
				cm.Data[data.Content[i].Value] = v.Value
			}
		}
	}
	return cm
}

// objectShape is what lint reads of any object besides its pod spec: the pod template, wherever the
// kind keeps it, and the fields that say how its pods are replaced.
type objectShape struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Replicas    *int32                `json:"replicas"`
		ServiceName string                `json:"serviceName"`
		Strategy    struct{ Type string } `json:"strategy"`
		Template    *json.RawMessage      `json:"template"`
		JobTemplate *struct {
			Spec struct {
				Template *json.RawMessage `json:"template"`
			} `json:"spec"`
		} `json:"jobTemplate"`
	} `json:"spec"`
}

// template returns the raw pod template and whether it sits under a job template.
func (s *objectShape) template() (raw *json.RawMessage, job bool) {
	if s.Spec.JobTemplate != nil && s.Spec.JobTemplate.Spec.Template != nil {
		return s.Spec.JobTemplate.Spec.Template, true
	}
	return s.Spec.Template, false
}

// podPath is the path from the document root to the pod spec, or nil when the object has no pod
// template with containers.
func (s *objectShape) podPath() []any {
	raw, job := s.template()
	if raw == nil {
		return nil
	}
	var t struct {
		Spec *struct {
			Containers []json.RawMessage `json:"containers"`
		} `json:"spec"`
	}
	if json.Unmarshal(*raw, &t) != nil || t.Spec == nil || t.Spec.Containers == nil {
		return nil
	}
	if job {
		return []any{"spec", "jobTemplate", "spec", "template", "spec"}
	}
	return []any{"spec", "template", "spec"}
}

// apply copies the replacement fields onto w.
func (s *objectShape) apply(w *Workload) {
	w.Replicas = s.Spec.Replicas
	w.ServiceName = s.Spec.ServiceName
	w.Recreate = s.Spec.Strategy.Type == "Recreate"
	_, job := s.template()
	w.RunsToCompletion = job || w.Kind == "Job" || w.Kind == "CronJob"
}

// decodeGenericWorkload builds a workload of a kind lint has no type for from its pod template.
func decodeGenericWorkload(kind string, s objectShape) (*Workload, error) {
	raw, _ := s.template()
	var template corev1.PodTemplateSpec
	if err := json.Unmarshal(*raw, &template); err != nil {
		return nil, err
	}
	return newWorkload(kind, s.Metadata, template), nil
}

func unsupportedVersion(pos Position, tm metav1.TypeMeta) *InputError {
	want := "v1"
	if k, ok := podTemplateKinds[tm.Kind]; ok {
		want = k.apiVersion
	}
	return &InputError{Pos: pos, Msg: fmt.Sprintf("unsupported apiVersion %q for %s (want %s)", tm.APIVersion, tm.Kind, want)}
}

// decodeWorkload decodes a workload of kind from raw into its typed API object and keeps what the
// rules read.
func decodeWorkload(kind string, raw []byte) (*Workload, error) {
	var (
		meta        metav1.ObjectMeta
		template    corev1.PodTemplateSpec
		replicas    *int32
		serviceName string
		recreate    bool
	)
	switch kind {
	case "Deployment":
		var o appsv1.Deployment
		if err := sigsyaml.Unmarshal(raw, &o); err != nil {
			return nil, err
		}
		meta, template = o.ObjectMeta, o.Spec.Template
		replicas, recreate = o.Spec.Replicas, o.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType
	case "StatefulSet":
		var o appsv1.StatefulSet
		if err := sigsyaml.Unmarshal(raw, &o); err != nil {
			return nil, err
		}
		meta, template = o.ObjectMeta, o.Spec.Template
		replicas, serviceName = o.Spec.Replicas, o.Spec.ServiceName
	case "DaemonSet":
		var o appsv1.DaemonSet
		if err := sigsyaml.Unmarshal(raw, &o); err != nil {
			return nil, err
		}
		meta, template = o.ObjectMeta, o.Spec.Template
	case "ReplicaSet":
		var o appsv1.ReplicaSet
		if err := sigsyaml.Unmarshal(raw, &o); err != nil {
			return nil, err
		}
		meta, template = o.ObjectMeta, o.Spec.Template
		replicas = o.Spec.Replicas
	case "Job":
		var o batchv1.Job
		if err := sigsyaml.Unmarshal(raw, &o); err != nil {
			return nil, err
		}
		meta, template = o.ObjectMeta, o.Spec.Template
	case "CronJob":
		var o batchv1.CronJob
		if err := sigsyaml.Unmarshal(raw, &o); err != nil {
			return nil, err
		}
		meta, template = o.ObjectMeta, o.Spec.JobTemplate.Spec.Template
	case "Pod":
		var o corev1.Pod
		if err := sigsyaml.Unmarshal(raw, &o); err != nil {
			return nil, err
		}
		meta = o.ObjectMeta
		template = corev1.PodTemplateSpec{ObjectMeta: o.ObjectMeta, Spec: o.Spec}
	default:
		return nil, fmt.Errorf("no decoder for kind %s", kind)
	}
	w := newWorkload(kind, meta, template)
	w.Replicas, w.ServiceName, w.Recreate = replicas, serviceName, recreate
	w.RunsToCompletion = kind == "Job" || kind == "CronJob"
	return w, nil
}

// newWorkload builds a Workload from an object's metadata and pod template.
func newWorkload(kind string, meta metav1.ObjectMeta, template corev1.PodTemplateSpec) *Workload {
	ann := map[string]string{}
	for k, v := range meta.Annotations {
		ann[k] = v
	}
	for k, v := range template.Annotations {
		ann[k] = v
	}
	return &Workload{
		Kind:        kind,
		Name:        meta.Name,
		Namespace:   meta.Namespace,
		Annotations: ann,
		PodLabels:   template.Labels,
		Pod:         template.Spec,
	}
}

// isList reports whether an object of kind is a list of objects: a v1 List, or a typed list
// (DeploymentList, PodList, …: what `kubectl get -o yaml` prints for one kind) that holds items.
func isList(doc *docNode, kind string) bool {
	if kind == "List" {
		return true
	}
	if !strings.HasSuffix(kind, "List") || len(kind) == len("List") {
		return false
	}
	if doc == nil || doc.root == nil {
		return false
	}
	items := childAt(doc.root, "items")
	return items != nil && (items.Kind == yaml.SequenceNode || items.Kind == yaml.ScalarNode && items.Tag == "!!null")
}

// decodeList decodes each item of a List (what `kubectl get -o yaml` prints).
func decodeList(inv *Inventory, doc *docNode, pos Position, raw []byte) *InputError {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := sigsyaml.Unmarshal(raw, &list); err != nil {
		return decodeError(doc, pos, err)
	}
	for i, item := range list.Items {
		itemDoc := &docNode{firstLine: doc.firstLine}
		if n := childAt(doc.root, "items", i); n != nil {
			itemDoc.root = n
		}
		itemPos := doc.position(pos, []any{"items", i})
		if err := decodeObject(inv, itemDoc, itemPos, item); err != nil {
			inv.Problems = append(inv.Problems, err)
		}
	}
	return nil
}

// childAt returns the node at path below n, or nil.
func childAt(n *yaml.Node, path ...any) *yaml.Node {
	for _, step := range path {
		switch s := step.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return nil
			}
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == s {
					next = n.Content[i+1]
					break
				}
			}
			if next == nil {
				return nil
			}
			n = next
		case int:
			if n.Kind != yaml.SequenceNode || s < 0 || s >= len(n.Content) {
				return nil
			}
			n = n.Content[s]
		}
	}
	return n
}

var jsonTypeError = regexp.MustCompile(`cannot unmarshal (\w+) into Go struct field \w+\.([\w.]+) of type (\S+)`)

// decodeError turns a decoding error into an InputError. A JSON type error names a field path
// without indexes; the YAML tree is searched for a node on that path of the offending type so the
// error points at its line.
func decodeError(doc *docNode, pos Position, err error) *InputError {
	msg := err.Error()
	if m := jsonTypeError.FindStringSubmatch(msg); m != nil {
		if line := findTyped(doc.root, strings.Split(m[2], "."), m[1]); line > 0 {
			pos.Line = doc.firstLine + line - 1
		}
		return &InputError{Pos: pos, Msg: fmt.Sprintf("field %s: got a %s, want %s", m[2], m[1], m[3])}
	}
	msg = strings.TrimPrefix(msg, "error unmarshaling JSON: ")
	msg = strings.TrimPrefix(msg, "while decoding JSON: ")
	return &InputError{Pos: pos, Msg: "cannot decode object: " + msg}
}

// findTyped returns the line of the first node on the dotted path (descending into every element of
// sequences) whose YAML type matches the JSON type named in a decode error, or of the first node on
// the path when none matches, or 0.
func findTyped(n *yaml.Node, path []string, jsonType string) int {
	var first int
	var walk func(n *yaml.Node, path []string) int
	walk = func(n *yaml.Node, path []string) int {
		if n == nil {
			return 0
		}
		if n.Kind == yaml.SequenceNode && len(path) > 0 {
			for _, e := range n.Content {
				if l := walk(e, path); l > 0 {
					return l
				}
			}
			return 0
		}
		if len(path) == 0 {
			if first == 0 {
				first = n.Line
			}
			if matchesJSONType(n, jsonType) {
				return n.Line
			}
			return 0
		}
		return walk(childAt(n, path[0]), path[1:])
	}
	if n == nil {
		return 0
	}
	if l := walk(n, path); l > 0 {
		return l
	}
	return first
}

func matchesJSONType(n *yaml.Node, jsonType string) bool {
	switch jsonType {
	case "string":
		return n.Kind == yaml.ScalarNode && n.Tag == "!!str"
	case "number":
		return n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float")
	case "bool":
		return n.Kind == yaml.ScalarNode && n.Tag == "!!bool"
	case "array":
		return n.Kind == yaml.SequenceNode
	case "object":
		return n.Kind == yaml.MappingNode
	}
	return false
}
