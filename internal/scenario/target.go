package scenario

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// TargetSpec describes the user's own application (probegate run --target FILE): the manifests it
// is installed from, applied untouched into each scenario's own namespace, and which of their
// objects is under test. The probes, handlers, preStop hooks, grace periods and strategy tested are
// the manifests' own.
type TargetSpec struct {
	Name string `json:"name"`
	// Manifests are files or directories (a directory with a kustomization is rendered with
	// kustomize), relative to the target file, applied in order.
	Manifests []string `json:"manifests"`
	// Workload is the workload under test ("deployment/NAME" or "statefulset/NAME").
	Workload WorkloadRef `json:"workload"`
	// Container is the container under test; the workload's first when empty.
	Container string `json:"container,omitempty"`
	// Service routes traffic to the workload; Port is its port, by name or number (its first when
	// empty): the one that speaks Protocol.
	Service string `json:"service"`
	Port    string `json:"port,omitempty"`
	// Protocol is what the load speaks on Port: LoadHTTP (the default) or LoadGRPC.
	Protocol string `json:"protocol,omitempty"`
	// GRPC is the call a gRPC load makes (set exactly when Protocol is LoadGRPC).
	GRPC *GRPCCall `json:"grpc,omitempty"`
	// Images swap image references in the manifests (old → new, a local image or an image tarball).
	Images map[string]string `json:"images,omitempty"`
	// Requests are what the load asks for.
	Requests Requests `json:"requests"`
	// PodHeader is the response header naming the serving pod, when the app sends one.
	PodHeader string `json:"podHeader,omitempty"`
	// Stall is the optional cooperative event-loop-stall endpoint.
	Stall *StallEndpoint `json:"stall,omitempty"`
	// BootstrapEnv is the app's own switch for a slow bootstrap, when it has one: an env var of the
	// container naming how long its bootstrap takes (cold-start sets it). Without one, cold-start
	// slows the new pods by limiting their CPU while they boot.
	BootstrapEnv string `json:"bootstrapEnv,omitempty"`
	// Dependencies get a real toxiproxy interposed on the app's path to them.
	Dependencies []Dependency `json:"dependencies,omitempty"`
	// FrontDoor is how the load reaches the pods: nil is kube-proxy, through a NodePort Service.
	FrontDoor *FrontDoor `json:"frontDoor,omitempty"`
	// File is where the spec was read from; manifest paths are relative to its directory.
	File string `json:"-"`
}

// WorkloadRef names the workload under test.
type WorkloadRef struct {
	Kind string `json:"kind"` // Deployment or StatefulSet
	Name string `json:"name"`
}

func (w WorkloadRef) String() string { return strings.ToLower(w.Kind) + "/" + w.Name }

// Requests are the request paths of the load.
type Requests struct {
	// Default is the path of ordinary requests ("/").
	Default string `json:"default"`
	// Takes is a path template for a request the server holds for about a given time: {seconds}
	// (whole seconds, rounded up), {ms} or {duration} (Go syntax, "20s") are replaced by it.
	Takes string `json:"takes,omitempty"`
}

// TakesPath is the path of a request that takes about d, or "" when the target has no such request.
func (r Requests) TakesPath(d time.Duration) string {
	if r.Takes == "" {
		return ""
	}
	return strings.NewReplacer(
		"{seconds}", strconv.Itoa(int(math.Ceil(d.Seconds()))),
		"{ms}", strconv.FormatInt(d.Milliseconds(), 10),
		"{duration}", d.String(),
	).Replace(r.Takes)
}

// StallEndpoint is a cooperative fault interface: POST Path?d=DURATION on Port stalls the worker.
type StallEndpoint struct {
	Port int    `json:"port"`
	Path string `json:"path"`
}

// Load protocols: what the load speaks to the target's port.
const (
	LoadHTTP = "http"
	LoadGRPC = "grpc"
)

// GRPCHealthCheck is the standard gRPC health service's Check, a gRPC target's default call.
const GRPCHealthCheck = "/grpc.health.v1.Health/Check"

// GRPCCall is the unary call a gRPC load makes.
type GRPCCall struct {
	// Method is the full method name, /package.Service/Method (GRPCHealthCheck when not given).
	Method string `json:"method"`
	// Request is the request message as protobuf JSON ("" is the empty message); any method but the
	// health check has its types learnt from the server's reflection service when the load starts.
	Request string `json:"request,omitempty"`
	// Service is the service name the health check asks about ("" is the server as a whole).
	Service string `json:"service,omitempty"`
}

// grpcMethodRE is /package.Service/Method: a dotted service name with a package, a method name.
var grpcMethodRE = regexp.MustCompile(`^/[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+/[A-Za-z_][A-Za-z0-9_]*$`)

// FrontDoor says how the load reaches the workload's pods (internal/frontdoor registers each kind).
type FrontDoor struct {
	// Kind is FrontDoorKubeProxy (the default), FrontDoorIngress or FrontDoorGateway.
	Kind string `json:"kind"`
	// Ingress names the Ingress of the manifests the load comes through (set exactly for FrontDoorIngress).
	Ingress string `json:"ingress,omitempty"`
	// HTTPRoute names the HTTPRoute of the manifests the load comes through (set exactly for
	// FrontDoorGateway).
	HTTPRoute string `json:"httpRoute,omitempty"`
}

// Front door kinds.
const (
	// FrontDoorKubeProxy: a NodePort Service with the target Service's selector; kube-proxy picks the pod.
	FrontDoorKubeProxy = "kube-proxy"
	// FrontDoorIngress: a real ingress controller, deployed into the scenario's namespace, serving
	// the user's Ingress; the controller picks the pod.
	FrontDoorIngress = "ingress"
	// FrontDoorGateway: a real Gateway API implementation, deployed into the scenario's namespace,
	// serving the user's HTTPRoute through a Gateway of its own; the gateway picks the pod.
	FrontDoorGateway = "gateway"
)

// frontDoorKinds are the kinds a target file may name.
var frontDoorKinds = []string{FrontDoorKubeProxy, FrontDoorIngress, FrontDoorGateway}

// Dependency is a TCP dependency the app reaches through a Service of its manifests.
type Dependency struct {
	// Name identifies it in faults (param dependency).
	Name    string `json:"name"`
	Service string `json:"service"`
	Port    int    `json:"port"`
	// Protocol says how the proof of a fault's effect talks to it: postgres, or tcp (no proof of
	// latency: the effect is then reported as not observed).
	Protocol string `json:"protocol"`
}

// Dependency protocols.
const (
	ProtocolPostgres = "postgres"
	ProtocolTCP      = "tcp"
)

// removedTargetFields were the first format's: the target file now names the user's manifests.
var removedTargetFields = []string{"image", "deployment", "namespace", "path", "probes", "admin", "env"}

// LoadTargetSpec reads and validates a --target file.
func LoadTargetSpec(file string) (*TargetSpec, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read target: %w", err)
	}
	return ParseTargetSpec(file, data)
}

// ParseTargetSpec decodes and validates a target description. It checks the file alone; whether
// the manifests hold the named objects is checked when they are read (deploy.LoadApp).
func ParseTargetSpec(file string, data []byte) (*TargetSpec, error) {
	r := &nodeReader{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &InvalidError{Problems: []Problem{{File: file, Line: yamlErrorLine(err), Msg: "malformed YAML: " + yamlErrorText(err)}}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &InvalidError{Problems: []Problem{{File: file, Msg: "empty file"}}}
	}
	t := &TargetSpec{File: file, Requests: Requests{Default: "/"}, Protocol: LoadHTTP}
	var protocolNode, grpcNode, requestsNode, frontDoorNode *yaml.Node
	root := doc.Content[0]
	if root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if k := root.Content[i]; slices.Contains(removedTargetFields, k.Value) {
				r.fail(k, k.Value, "no longer a target file field: name your own manifests (manifests:, workload:, service:); see docs/target-file.md")
			}
		}
		if len(r.problems) > 0 {
			return nil, &InvalidError{Problems: r.problems}
		}
	}
	var workload string
	var nameNode, workloadNode *yaml.Node
	r.mapping(root, "", map[string]field{
		"name": {required: true, decode: func(n *yaml.Node, p string) {
			nameNode = n
			r.str(n, p, &t.Name)
		}},
		"manifests": {required: true, decode: func(n *yaml.Node, p string) {
			r.sequence(n, p, func(_ int, item *yaml.Node, p string) {
				var s string
				r.str(item, p, &s)
				if s == "" {
					r.fail(item, p, "empty path")
				}
				t.Manifests = append(t.Manifests, s)
			})
		}},
		"workload": {required: true, decode: func(n *yaml.Node, p string) {
			workloadNode = n
			r.str(n, p, &workload)
		}},
		"container": {decode: func(n *yaml.Node, p string) { r.str(n, p, &t.Container) }},
		"service":   {required: true, decode: func(n *yaml.Node, p string) { r.str(n, p, &t.Service) }},
		"port":      {decode: func(n *yaml.Node, p string) { r.text(n, p, &t.Port) }},
		"protocol": {decode: func(n *yaml.Node, p string) {
			protocolNode = n
			r.str(n, p, &t.Protocol)
			if t.Protocol != LoadHTTP && t.Protocol != LoadGRPC {
				r.fail(n, p, "want %s or %s, got %q", LoadHTTP, LoadGRPC, t.Protocol)
			}
		}},
		"grpc": {decode: func(n *yaml.Node, p string) {
			grpcNode = n
			t.GRPC = &GRPCCall{}
			r.mapping(n, p, map[string]field{
				"method": {decode: func(n *yaml.Node, p string) {
					r.str(n, p, &t.GRPC.Method)
					if !grpcMethodRE.MatchString(t.GRPC.Method) {
						r.fail(n, p, "want /package.Service/Method, got %q", t.GRPC.Method)
					}
				}},
				"request": {decode: func(n *yaml.Node, p string) {
					r.str(n, p, &t.GRPC.Request)
					if !json.Valid([]byte(t.GRPC.Request)) {
						r.fail(n, p, "not JSON: want the request message as protobuf JSON, e.g. '{\"name\": \"x\"}'")
					}
				}},
				"service": {decode: func(n *yaml.Node, p string) { r.str(n, p, &t.GRPC.Service) }},
			})
		}},
		"images": {decode: func(n *yaml.Node, p string) { r.params(n, p, &t.Images) }},
		"requests": {decode: func(n *yaml.Node, p string) {
			requestsNode = n
			r.mapping(n, p, map[string]field{
				"default": {decode: func(n *yaml.Node, p string) {
					r.str(n, p, &t.Requests.Default)
					if !strings.HasPrefix(t.Requests.Default, "/") {
						r.fail(n, p, "must be a path starting with /, got %q", t.Requests.Default)
					}
				}},
				"takes": {decode: func(n *yaml.Node, p string) {
					r.str(n, p, &t.Requests.Takes)
					if !strings.HasPrefix(t.Requests.Takes, "/") {
						r.fail(n, p, "must be a path starting with /, got %q", t.Requests.Takes)
					} else if t.Requests.TakesPath(time.Second) == t.Requests.Takes {
						r.fail(n, p, "names no time: use {seconds}, {ms} or {duration} where the request's duration goes")
					}
				}},
			})
		}},
		"podHeader": {decode: func(n *yaml.Node, p string) { r.str(n, p, &t.PodHeader) }},
		"bootstrapEnv": {decode: func(n *yaml.Node, p string) {
			r.str(n, p, &t.BootstrapEnv)
			if t.BootstrapEnv != "" && !envName.MatchString(t.BootstrapEnv) {
				r.fail(n, p, "must be an environment variable name, got %q", t.BootstrapEnv)
			}
		}},
		"stall": {decode: func(n *yaml.Node, p string) {
			t.Stall = &StallEndpoint{}
			var port int64
			r.mapping(n, p, map[string]field{
				"port": {required: true, decode: func(n *yaml.Node, p string) {
					r.integer(n, p, &port)
					if port < 1 || port > 65535 {
						r.fail(n, p, "must be a port number, got %d", port)
					}
				}},
				"path": {required: true, decode: func(n *yaml.Node, p string) { r.str(n, p, &t.Stall.Path) }},
			})
			t.Stall.Port = int(port)
		}},
		"frontDoor": {decode: func(n *yaml.Node, p string) {
			frontDoorNode = n
			t.FrontDoor = &FrontDoor{}
			r.mapping(n, p, map[string]field{
				"kind": {required: true, decode: func(n *yaml.Node, p string) {
					r.str(n, p, &t.FrontDoor.Kind)
					if !slices.Contains(frontDoorKinds, t.FrontDoor.Kind) {
						r.fail(n, p, "want %s, %s or %s, got %q", FrontDoorKubeProxy, FrontDoorIngress, FrontDoorGateway, t.FrontDoor.Kind)
					}
				}},
				"ingress": {decode: func(n *yaml.Node, p string) {
					r.str(n, p, &t.FrontDoor.Ingress)
					if t.FrontDoor.Ingress == "" {
						r.fail(n, p, "empty: name the Ingress of your manifests the load comes through")
					}
				}},
				"httpRoute": {decode: func(n *yaml.Node, p string) {
					r.str(n, p, &t.FrontDoor.HTTPRoute)
					if t.FrontDoor.HTTPRoute == "" {
						r.fail(n, p, "empty: name the HTTPRoute of your manifests the load comes through")
					}
				}},
			})
		}},
		"dependencies": {decode: func(n *yaml.Node, p string) {
			r.sequence(n, p, func(_ int, item *yaml.Node, p string) {
				d := Dependency{Protocol: ProtocolTCP}
				var port int64
				r.mapping(item, p, map[string]field{
					"name": {required: true, decode: func(n *yaml.Node, p string) {
						r.str(n, p, &d.Name)
						if !nameRE.MatchString(d.Name) {
							r.fail(n, p, "must be lowercase letters, digits and '-', got %q", d.Name)
						}
					}},
					"service": {required: true, decode: func(n *yaml.Node, p string) { r.str(n, p, &d.Service) }},
					"port": {required: true, decode: func(n *yaml.Node, p string) {
						r.integer(n, p, &port)
						if port < 1 || port > 65535 {
							r.fail(n, p, "must be a port number, got %d", port)
						}
					}},
					"protocol": {decode: func(n *yaml.Node, p string) {
						r.str(n, p, &d.Protocol)
						if d.Protocol != ProtocolPostgres && d.Protocol != ProtocolTCP {
							r.fail(n, p, "want %s or %s, got %q", ProtocolPostgres, ProtocolTCP, d.Protocol)
						}
					}},
				})
				d.Port = int(port)
				for _, prev := range t.Dependencies {
					if prev.Name == d.Name {
						r.fail(item, p, "dependency %q named twice", d.Name)
					}
					if prev.Service == d.Service && prev.Port == d.Port {
						r.fail(item, p, "service %s port %d is already dependency %q", d.Service, d.Port, prev.Name)
					}
				}
				t.Dependencies = append(t.Dependencies, d)
			})
		}},
	})
	if len(r.problems) == 0 {
		if !nameRE.MatchString(t.Name) {
			r.fail(nameNode, "name", "must be lowercase letters, digits and '-', got %q", t.Name)
		}
		kind, name, ok := strings.Cut(workload, "/")
		switch strings.ToLower(kind) {
		case "deployment", "deploy":
			t.Workload.Kind = "Deployment"
		case "statefulset", "sts":
			t.Workload.Kind = "StatefulSet"
		default:
			ok = false
		}
		t.Workload.Name = name
		switch why := untestedKinds[strings.ToLower(kind)]; {
		case why != "":
			r.fail(workloadNode, "workload", "%s: probegate cannot test this kind: %s; want deployment/NAME or statefulset/NAME", workload, why)
		case !ok || name == "":
			r.fail(workloadNode, "workload", "want deployment/NAME or statefulset/NAME, got %q", workload)
		}
		r.checkGRPC(t, protocolNode, grpcNode, requestsNode)
		r.checkFrontDoor(t, frontDoorNode)
	}
	if len(r.problems) > 0 {
		return nil, &InvalidError{Problems: r.problems}
	}
	return t, nil
}

// untestedKinds says, for the workload kinds a user may name that probegate does not test, why
// not: every scenario sets its own replica count and judges a fixed set of pods behind a Service.
var untestedKinds = func() map[string]string {
	ds := "a DaemonSet runs one pod per eligible node, so a scenario's replica count cannot be set " +
		"(on a one-node cluster it would judge a single pod), and its rollouts are not built " +
		"(docs/target-file.md, \"Workload kinds\")"
	job := "a Job's pods run to completion and are not kept behind a Service"
	rs := "a bare ReplicaSet has no rollout; name the Deployment that owns it"
	return map[string]string{"daemonset": ds, "ds": ds, "job": job, "cronjob": job, "replicaset": rs, "rs": rs}
}()

// checkGRPC checks that the grpc block and the HTTP requests go with the protocol, and defaults the
// call to the health check.
func (r *nodeReader) checkGRPC(t *TargetSpec, protocolNode, grpcNode, requestsNode *yaml.Node) {
	if t.Protocol != LoadGRPC {
		if grpcNode != nil {
			r.fail(grpcNode, "grpc", "goes with protocol: grpc (the load speaks %s)", t.Protocol)
		}
		return
	}
	if requestsNode != nil {
		r.fail(requestsNode, "requests", "HTTP paths: a gRPC target's load makes the call grpc: names")
	}
	if t.GRPC == nil {
		t.GRPC = &GRPCCall{}
		grpcNode = protocolNode
	}
	if t.GRPC.Method == "" {
		t.GRPC.Method = GRPCHealthCheck
	}
	if t.GRPC.Service != "" && (t.GRPC.Method != GRPCHealthCheck || t.GRPC.Request != "") {
		r.fail(grpcNode, "grpc.service", "names the service the health check asks about: it goes with the health check (%s) and no request", GRPCHealthCheck)
	}
}

// checkFrontDoor checks that a front door names the object it serves (an ingress door its
// Ingress, a gateway door its HTTPRoute) and only that one, and that the load it carries is HTTP (a
// gRPC load through a controller is not built yet).
func (r *nodeReader) checkFrontDoor(t *TargetSpec, n *yaml.Node) {
	fd := t.FrontDoor
	if fd == nil || len(r.problems) > 0 {
		return
	}
	r.doorNames(n, fd.Kind, FrontDoorIngress, "frontDoor.ingress", "the Ingress", fd.Ingress)
	r.doorNames(n, fd.Kind, FrontDoorGateway, "frontDoor.httpRoute", "the HTTPRoute", fd.HTTPRoute)
	if len(r.problems) == 0 && fd.Kind != FrontDoorKubeProxy && t.Protocol == LoadGRPC {
		r.fail(n, "frontDoor", "kind: %s carries HTTP load only: a gRPC target goes through %s", fd.Kind, FrontDoorKubeProxy)
	}
}

// doorNames checks that field (naming what, set to name) is given exactly when the door is of kind.
func (r *nodeReader) doorNames(n *yaml.Node, got, kind, field, what, name string) {
	switch {
	case got == kind && name == "":
		r.fail(n, field, "required with kind: %s: name %s of your manifests the load comes through", kind, what)
	case got != kind && name != "":
		r.fail(n, field, "goes with kind: %s (the load goes through %s)", kind, got)
	}
}

// DoorKind is the target's front door kind, FrontDoorKubeProxy when it names none.
func (t *TargetSpec) DoorKind() string {
	if t == nil || t.FrontDoor == nil || t.FrontDoor.Kind == "" {
		return FrontDoorKubeProxy
	}
	return t.FrontDoor.Kind
}

// ManifestPaths are the manifests' paths, resolved against the target file's directory.
func (t *TargetSpec) ManifestPaths() []string {
	out := make([]string, len(t.Manifests))
	for i, m := range t.Manifests {
		if filepath.IsAbs(m) || t.File == "" {
			out[i] = m
		} else {
			out[i] = filepath.Join(filepath.Dir(t.File), m)
		}
	}
	return out
}

// envName is what an environment variable's name may be.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// ParseVia reads a --via flag, KIND or KIND=NAME (kube-proxy, ingress[=INGRESS],
// gateway[=HTTPROUTE]): the front door a run takes instead of the target file's. A door named
// without its object takes the only one of its kind in the manifests (the door checks that).
func ParseVia(s string) (*FrontDoor, error) {
	kind, name, named := strings.Cut(s, "=")
	if named && name == "" {
		return nil, fmt.Errorf("--via %s: name the object after =, or leave the = out", s)
	}
	switch kind {
	case FrontDoorKubeProxy:
		if named {
			return nil, fmt.Errorf("--via %s: kube-proxy names no object", s)
		}
		return &FrontDoor{Kind: kind}, nil
	case FrontDoorIngress:
		return &FrontDoor{Kind: kind, Ingress: name}, nil
	case FrontDoorGateway:
		return &FrontDoor{Kind: kind, HTTPRoute: name}, nil
	}
	return nil, fmt.Errorf("--via %q: want %s, %s[=INGRESS] or %s[=HTTPROUTE]", s, FrontDoorKubeProxy, FrontDoorIngress, FrontDoorGateway)
}
