package lint

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
)

// Position is where an object, or a field in it, came from: a file and a 1-based line, or for live
// objects a cluster reference and line 0.
type Position struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
}

func (p Position) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return p.File
}

// Inventory is everything one lint run looks at.
type Inventory struct {
	Workloads []*Workload
	Services  []*Service
	// RoutingServices are Services read only to see what routes to the workloads (lint --services):
	// they are not linted or counted themselves.
	RoutingServices []*Service
	// AllServicesInView is true when every Service that could route to the workloads was read (a
	// live namespace): a workload no Service selects then serves nothing.
	AllServicesInView bool
	// ConfigMaps are the ConfigMaps read beside the workloads (also listed in Skipped): an exec probe
	// that runs a file of a mounted one is read as that file's text.
	ConfigMaps []*ConfigMap
	// Skipped lists objects that carry no pod template (ConfigMap, Secret, webhook configurations,
	// custom resources, …), read and left alone.
	Skipped []Skipped
	// Problems are the documents and files that could not be read (bad input). The rest of the
	// inventory is linted regardless.
	Problems []*InputError
}

// Skipped is an object lint reads but does not analyse.
type Skipped struct {
	Kind, Name string
	Pos        Position
	// Unknown is true for kinds lint does not know (custom resources, APIService, …).
	Unknown bool
}

// UnknownKinds counts the skipped objects of kinds lint does not know.
func (inv *Inventory) UnknownKinds() int {
	n := 0
	for _, s := range inv.Skipped {
		if s.Unknown {
			n++
		}
	}
	return n
}

// Workload is anything that runs pods: a Deployment, StatefulSet, DaemonSet, ReplicaSet, Job,
// CronJob or a bare Pod.
type Workload struct {
	Kind      string
	Name      string
	Namespace string
	// Annotations are the workload's own, overridden by the pod template's.
	Annotations map[string]string
	// PodLabels are the labels its pods carry (what a Service selects on).
	PodLabels map[string]string
	Pod       corev1.PodSpec
	Pos       Position
	// Replicas is spec.replicas (nil when unset or for kinds without it).
	Replicas *int32
	// ServiceName is a StatefulSet's governing (peer discovery) Service.
	ServiceName string
	// Recreate is true when the old pods stop before new ones start (strategy Recreate).
	Recreate bool
	// RunsToCompletion is true for Jobs, CronJobs and anything else with a job template.
	RunsToCompletion bool

	doc     *docNode // nil for live objects
	podPath []any    // from the document root to the pod spec
}

// Ref names the workload the way kubectl does: "deployment/api".
func (w *Workload) Ref() string { return strings.ToLower(w.Kind) + "/" + w.Name }

// Service is a Service read alongside the workloads.
type Service struct {
	Name      string
	Namespace string
	Spec      corev1.ServiceSpec
	Pos       Position
	doc       *docNode
	// routingOnly marks a Service read with --services: it routes, but is not linted.
	routingOnly bool
}

// ConfigMap is a ConfigMap read alongside the workloads: only its name and text data.
type ConfigMap struct {
	Name      string
	Namespace string
	Data      map[string]string
	Pos       Position
}

// Ref names the service the way kubectl does.
func (s *Service) Ref() string { return "service/" + s.Name }

// At returns the position of the field at path (keys and indexes) below the service's root.
func (s *Service) At(path ...any) Position { return s.doc.position(s.Pos, path) }

// ContainerRef is one container of a workload together with where it sits in the pod spec.
type ContainerRef struct {
	*corev1.Container
	path []any // from the pod spec: "containers", i
}

// Containers lists the long-running containers: regular containers and restartable (sidecar) init
// containers. Ordinary init containers run to completion and are never probed.
func (w *Workload) Containers() []ContainerRef {
	var out []ContainerRef
	for i := range w.Pod.Containers {
		out = append(out, ContainerRef{Container: &w.Pod.Containers[i], path: []any{"containers", i}})
	}
	for i := range w.Pod.InitContainers {
		c := &w.Pod.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			out = append(out, ContainerRef{Container: c, path: []any{"initContainers", i}})
		}
	}
	return out
}

// At returns the position of the field at path below the pod spec (for example
// "terminationGracePeriodSeconds"), or the workload's own position when the field is absent or the
// workload is live.
func (w *Workload) At(path ...any) Position {
	full := append(append([]any{}, w.podPath...), path...)
	return w.doc.position(w.Pos, full)
}

// AtContainer returns the position of the field at path below container c.
func (w *Workload) AtContainer(c ContainerRef, path ...any) Position {
	return w.At(append(append([]any{}, c.path...), path...)...)
}

// docNode is a parsed YAML document with the line its text starts on in the file.
type docNode struct {
	root      *yaml.Node // the document's top-level mapping (or a List item)
	firstLine int        // file line of the document text's first line
}

// position walks path from the document root and returns the line of the deepest node reached;
// fallback is used when there is no document (live objects).
func (d *docNode) position(fallback Position, path []any) Position {
	if d == nil || d.root == nil {
		return fallback
	}
	line := lineOf(d.root, path)
	if line <= 0 {
		return fallback
	}
	return Position{File: fallback.File, Line: d.firstLine + line - 1}
}

// lineOf returns the document-relative line of the deepest node on path below n. For a key step it is
// the key's line (where a reader looks for "livenessProbe:"), for an index step the element's.
func lineOf(n *yaml.Node, path []any) int {
	line := n.Line
	for _, step := range path {
		switch s := step.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return line
			}
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == s {
					line, n, found = n.Content[i].Line, n.Content[i+1], true
					break
				}
			}
			if !found {
				return line
			}
		case int:
			if n.Kind != yaml.SequenceNode || s < 0 || s >= len(n.Content) {
				return line
			}
			n = n.Content[s]
			line = n.Line
		}
	}
	return line
}

// annotationPos returns the position of annotation key: on the pod template when it is there
// (it wins), else on the workload's own metadata, else the workload's position.
func (w *Workload) annotationPos(key string) Position {
	if w.doc == nil || w.doc.root == nil {
		return w.Pos
	}
	template := append(append([]any{}, w.podPath[:len(w.podPath)-1]...), "metadata", "annotations", key)
	for _, path := range [][]any{template, {"metadata", "annotations", key}} {
		if childAt(w.doc.root, path...) != nil {
			return w.doc.position(w.Pos, path)
		}
	}
	return w.Pos
}
