package scenario

import (
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"
)

// TargetSpec describes any application to run scenarios against (probegate run --target FILE):
// either an image probegate deploys, or an existing Deployment and Service in a namespace.
type TargetSpec struct {
	Name string `json:"name"`
	// Image is deployed as a Deployment of Replicas pods with the given ports and probes.
	Image string `json:"image,omitempty"`
	// Deployment and Namespace name an existing workload (exclusive with Image).
	Deployment string `json:"deployment,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	// Service routes to the target; for an image it is created.
	Service string `json:"service,omitempty"`
	// Port is the container port serving traffic.
	Port int `json:"port"`
	// Path is the request path of the load ("/" by default).
	Path string `json:"path,omitempty"`
	// PodHeader is the response header naming the serving pod, when the app sends one.
	PodHeader string     `json:"podHeader,omitempty"`
	Probes    ProbePaths `json:"probes"`
	// Admin is the optional admin endpoint (stall); faults that need it are skipped without it.
	Admin *AdminEndpoint `json:"admin,omitempty"`
	// Env is passed to an image's container.
	Env  map[string]string `json:"env,omitempty"`
	File string            `json:"-"`
}

// ProbePaths are the HTTP paths of the target's probes on Port; empty means no such probe.
type ProbePaths struct {
	Liveness  string `json:"liveness,omitempty"`
	Readiness string `json:"readiness,omitempty"`
	Startup   string `json:"startup,omitempty"`
}

// AdminEndpoint is a cooperative fault interface on a port never exposed by the Service.
type AdminEndpoint struct {
	Port  int    `json:"port"`
	Stall string `json:"stall,omitempty"`
}

// LoadTargetSpec reads and validates a --target file.
func LoadTargetSpec(file string) (*TargetSpec, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read target: %w", err)
	}
	return ParseTargetSpec(file, data)
}

// ParseTargetSpec decodes and validates a target description.
func ParseTargetSpec(file string, data []byte) (*TargetSpec, error) {
	r := &nodeReader{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &InvalidError{Problems: []Problem{{File: file, Line: yamlErrorLine(err), Msg: "malformed YAML: " + yamlErrorText(err)}}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &InvalidError{Problems: []Problem{{File: file, Msg: "empty file"}}}
	}
	t := &TargetSpec{File: file, Path: "/"}
	root := doc.Content[0]
	var port, adminPort int64
	var portNode, nameNode *yaml.Node
	r.mapping(root, "", map[string]field{
		"name": {required: true, decode: func(n *yaml.Node, p string) {
			nameNode = n
			r.str(n, p, &t.Name)
		}},
		"image":      {decode: func(n *yaml.Node, p string) { r.str(n, p, &t.Image) }},
		"deployment": {decode: func(n *yaml.Node, p string) { r.str(n, p, &t.Deployment) }},
		"namespace":  {decode: func(n *yaml.Node, p string) { r.str(n, p, &t.Namespace) }},
		"service":    {decode: func(n *yaml.Node, p string) { r.str(n, p, &t.Service) }},
		"port": {required: true, decode: func(n *yaml.Node, p string) {
			portNode = n
			r.integer(n, p, &port)
		}},
		"path":      {decode: func(n *yaml.Node, p string) { r.str(n, p, &t.Path) }},
		"podHeader": {decode: func(n *yaml.Node, p string) { r.str(n, p, &t.PodHeader) }},
		"probes": {decode: func(n *yaml.Node, p string) {
			r.mapping(n, p, map[string]field{
				"liveness":  {decode: func(n *yaml.Node, p string) { r.str(n, p, &t.Probes.Liveness) }},
				"readiness": {decode: func(n *yaml.Node, p string) { r.str(n, p, &t.Probes.Readiness) }},
				"startup":   {decode: func(n *yaml.Node, p string) { r.str(n, p, &t.Probes.Startup) }},
			})
		}},
		"admin": {decode: func(n *yaml.Node, p string) {
			t.Admin = &AdminEndpoint{}
			r.mapping(n, p, map[string]field{
				"port":  {required: true, decode: func(n *yaml.Node, p string) { r.integer(n, p, &adminPort) }},
				"stall": {decode: func(n *yaml.Node, p string) { r.str(n, p, &t.Admin.Stall) }},
			})
		}},
		"env": {decode: func(n *yaml.Node, p string) { r.params(n, p, &t.Env) }},
	})
	t.Port = int(port)
	if t.Admin != nil {
		t.Admin.Port = int(adminPort)
	}
	if len(r.problems) == 0 {
		switch {
		case t.Image == "" && t.Deployment == "":
			r.fail(root, "image", "set image (probegate deploys it) or deployment (an existing one)")
		case t.Image != "" && t.Deployment != "":
			r.fail(root, "deployment", "set image or deployment, not both")
		case t.Deployment != "" && (t.Namespace == "" || t.Service == ""):
			r.fail(root, "namespace", "an existing deployment needs its namespace and service")
		}
		if port < 1 || port > 65535 {
			r.fail(portNode, "port", "must be a port number, got %d", port)
		}
		if !nameRE.MatchString(t.Name) {
			r.fail(nameNode, "name", "must be lowercase letters, digits and '-', got %q", t.Name)
		}
	}
	if len(r.problems) > 0 {
		return nil, &InvalidError{Problems: r.problems}
	}
	return t, nil
}

// HasAdmin reports whether the target offers the cooperative admin endpoint.
func (t *TargetSpec) HasAdmin() bool { return t != nil && t.Admin != nil && t.Admin.Port > 0 }
