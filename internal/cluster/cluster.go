// Package cluster creates, reuses and deletes probegate's local kind cluster, offline: it prepares
// the host (hack/host-prep.sh), builds or reuses the node image (hack/node-image.sh), runs the pinned
// kind CLI, checks the egress fence, and waits until the node is Ready and CoreDNS serves. The
// scripts and kind-config.yaml are embedded in the binary (recipe.go), so no source tree is needed.
// The CLI (`probegate cluster`), `make cluster` and the test suites all come through here.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// DefaultName is the kind cluster probegate creates.
const DefaultName = "probegate"

// KindVersion is the pinned kind CLI, installed with `go install` when missing.
const KindVersion = "v0.33.0"

// Options configure Create and Delete. Zero values mean the defaults.
type Options struct {
	Name      string // kind cluster name (DefaultName)
	Config    string // kind config file (<Root>/kind-config.yaml)
	NodeImage string // node image; empty: $KIND_NODE_IMAGE, else build with hack/node-image.sh
	// Root is a probegate source tree whose hack/ scripts and kind-config.yaml are run in place, for
	// developers changing them; empty: $PROBEGATE_ROOT, else the copies embedded in this binary
	// (packages hack and probegate), written once to CacheDir()/recipe/<content hash>.
	Root string
	// Workers is the number of worker nodes beside the control plane; 0: $PROBEGATE_WORKERS, else
	// none. With workers, Create generates the kind config from the embedded one (workerConfig);
	// it cannot be combined with Config.
	Workers int
	// AnyShape reuses a running cluster whatever its number of nodes (runs: a cluster made with
	// `cluster create --workers 2` stays as it is). Without it, a cluster whose node count differs
	// from the config's is recreated.
	AnyShape bool
	// WaitTimeout bounds waiting for the nodes and CoreDNS (3 minutes).
	WaitTimeout time.Duration
	Log         *slog.Logger
}

// Cluster is a running kind cluster.
type Cluster struct {
	Name string
	// Kubeconfig is the path of a kubeconfig file for this cluster only.
	Kubeconfig string
	// NodeContainer is the docker container of the control-plane node, the ingress node where the
	// host ports are published.
	NodeContainer string
	// Nodes are the docker containers of every node, the control plane's first; a node's container
	// name is its Kubernetes Node name.
	Nodes []string
	kind  string
	log   *slog.Logger
	// exec replaces `docker exec` into a node (tests).
	exec func(ctx context.Context, node string, args ...string) ([]byte, error)
}

func (o *Options) defaults() error {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.WaitTimeout == 0 {
		o.WaitTimeout = 3 * time.Minute
	}
	if o.Root == "" {
		o.Root = os.Getenv("PROBEGATE_ROOT")
	}
	root, err := recipeRoot(o.Root)
	if err != nil {
		return err
	}
	o.Root = root
	o.Log.Debug("host scripts", "root", o.Root)
	if o.Workers == 0 {
		if v := os.Getenv("PROBEGATE_WORKERS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("PROBEGATE_WORKERS=%q is not a number of worker nodes", v)
			}
			o.Workers = n
		}
	}
	if o.Workers < 0 || o.Workers > MaxWorkers {
		return fmt.Errorf("%d worker nodes: want 0 to %d", o.Workers, MaxWorkers)
	}
	switch {
	case o.Workers > 0 && o.Config != "":
		return fmt.Errorf("both a kind config (%s) and %d workers: list the workers in the config instead", o.Config, o.Workers)
	case o.Workers > 0:
		cfg, err := writeWorkerConfig(o.Workers)
		if err != nil {
			return err
		}
		o.Config = cfg
	case o.Config == "":
		o.Config = filepath.Join(o.Root, "kind-config.yaml")
	}
	if o.NodeImage == "" {
		o.NodeImage = os.Getenv("KIND_NODE_IMAGE")
	}
	return nil
}

// FindRoot locates the probegate source tree, for tests and tools that build from it: $PROBEGATE_ROOT,
// else the nearest parent of the working directory holding hack/node-image.sh. Create does not need
// it: the binary carries its scripts.
func FindRoot() (string, error) {
	if r := os.Getenv("PROBEGATE_ROOT"); r != "" {
		return r, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find probegate source tree: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "node-image.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the probegate source tree (hack/node-image.sh): run from the repository or set PROBEGATE_ROOT")
		}
		dir = parent
	}
}

// CacheDir is where probegate keeps built artefacts, kubeconfigs and recorded host state.
func CacheDir() string {
	if d := os.Getenv("PROBEGATE_CACHE"); d != "" {
		return d
	}
	return "/var/cache/probegate"
}

func kubeconfigPath(name string) string { return filepath.Join(CacheDir(), name+".kubeconfig") }

// Create brings the cluster up, or reuses it when it is already running and healthy. A creation
// that fails half-way is deleted, not left behind.
func Create(ctx context.Context, opts Options) (*Cluster, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	unlock, err := lock(opts.Name)
	if err != nil {
		return nil, err
	}
	defer unlock()

	if err := hostPrep(ctx, opts); err != nil {
		return nil, err
	}
	kind, err := ensureKind(ctx, opts.Log)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Name: opts.Name, Kubeconfig: kubeconfigPath(opts.Name), NodeContainer: opts.Name + "-control-plane", kind: kind, log: opts.Log}

	facts, err := readKindConfig(opts.Config)
	if err != nil {
		return nil, err
	}
	exists, err := c.exists(ctx)
	if err != nil {
		return nil, err
	}
	if exists {
		want := facts.Nodes
		if opts.AnyShape {
			want = 0
		}
		if err := c.reusable(ctx, want); err == nil {
			opts.Log.Info("reusing running cluster", "name", c.Name, "nodes", len(c.Nodes))
			if err := c.settle(ctx, opts.WaitTimeout); err != nil {
				return nil, err
			}
			return c, nil
		} else {
			opts.Log.Warn("existing cluster is not usable; recreating it", "name", c.Name, "reason", err)
			if err := c.deleteKind(ctx); err != nil {
				return nil, err
			}
		}
	}

	image := opts.NodeImage
	if image == "" {
		opts.Log.Info("building or reusing the offline node image (a cold build takes ~30 min)")
		out, err := runScript(ctx, opts.Root, "node-image.sh")
		if err != nil {
			return nil, fmt.Errorf("build node image: %w", err)
		}
		image = strings.TrimSpace(lastLine(string(out)))
	}
	if err := checkHostPorts(opts.Config); err != nil {
		return nil, err
	}
	if err := recordSysctls(opts.Name); err != nil {
		return nil, err
	}

	start := time.Now()
	opts.Log.Info("creating kind cluster", "name", c.Name, "image", image, "config", opts.Config)
	// With workers, the node names are published to every node while kind creates them.
	names := make(chan error, 1)
	namesCtx, stopNames := context.WithCancel(ctx)
	if facts.Nodes > 1 {
		go func() { names <- c.publishNodeNames(namesCtx, facts.Nodes) }()
	} else {
		names <- nil
	}
	_, err = runCmd(ctx, nil, kind, "create", "cluster", "--name", c.Name, "--image", image,
		"--config", opts.Config, "--kubeconfig", c.Kubeconfig, "--wait", "0s")
	stopNames()
	if nerr := <-names; nerr != nil {
		err = errors.Join(err, nerr)
	}
	if err == nil {
		opts.Log.Info("kind created the nodes", "took", time.Since(start).Round(100*time.Millisecond))
	}
	if err == nil {
		err = c.listNodes(ctx)
	}
	if err == nil && len(c.Nodes) != facts.Nodes {
		err = fmt.Errorf("kind created %d nodes, the config asks for %d", len(c.Nodes), facts.Nodes)
	}
	if err == nil {
		err = c.checkFence(ctx)
	}
	if err == nil {
		err = c.setupPodNet(ctx, facts.PodSubnet, opts.WaitTimeout)
	}
	if err == nil {
		err = c.settle(ctx, opts.WaitTimeout)
	}
	if err != nil {
		opts.Log.Error("cluster creation failed; deleting what was created", "err", err)
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = c.deleteKind(cleanup)
		_ = restoreSysctls(opts.Name, opts.Log)
		return nil, fmt.Errorf("create cluster %q: %w", c.Name, err)
	}
	opts.Log.Info("cluster ready", "name", c.Name, "nodes", len(c.Nodes), "took", time.Since(start).Round(time.Second), "kubeconfig", c.Kubeconfig)
	return c, nil
}

// Get returns the running cluster name without creating it.
func Get(ctx context.Context, name string) (*Cluster, error) {
	if name == "" {
		name = DefaultName
	}
	kind, err := ensureKind(ctx, slog.Default())
	if err != nil {
		return nil, err
	}
	c := &Cluster{Name: name, Kubeconfig: kubeconfigPath(name), NodeContainer: name + "-control-plane", kind: kind, log: slog.Default()}
	ok, err := c.exists(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("no kind cluster %q: create it with `make cluster`", name)
	}
	if err := c.listNodes(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Delete removes the cluster and restores the host sysctls kubelet changed. Deleting a cluster that
// does not exist only restores the sysctls.
func Delete(ctx context.Context, opts Options) error {
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	unlock, err := lock(opts.Name)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := runCmd(ctx, nil, "docker", "version", "--format", "{{.Server.Version}}"); err != nil {
		return fmt.Errorf("docker is not running (start it with `make host`): %w", err)
	}
	kind, err := ensureKind(ctx, opts.Log)
	if err != nil {
		return err
	}
	c := &Cluster{Name: opts.Name, Kubeconfig: kubeconfigPath(opts.Name), kind: kind, log: opts.Log}
	start := time.Now()
	if err := c.deleteKind(ctx); err != nil {
		return err
	}
	if err := restoreSysctls(opts.Name, opts.Log); err != nil {
		return err
	}
	opts.Log.Info("cluster deleted", "name", c.Name, "took", time.Since(start).Round(100*time.Millisecond))
	return nil
}

func (c *Cluster) exists(ctx context.Context) (bool, error) {
	out, err := runCmd(ctx, nil, c.kind, "get", "clusters")
	if err != nil {
		return false, fmt.Errorf("list kind clusters: %w", err)
	}
	return slices.Contains(strings.Fields(string(out)), c.Name), nil
}

// reusable reports why an existing cluster cannot be reused: it has another number of nodes than
// the config asks for, a stopped node (after a dockerd restart) is never trusted, and the API must
// answer.
// want is the number of nodes it must have; 0 takes any.
func (c *Cluster) reusable(ctx context.Context, want int) error {
	if err := c.listNodes(ctx); err != nil {
		return err
	}
	if want > 0 && len(c.Nodes) != want {
		return fmt.Errorf("it has %d nodes, the kind config %d", len(c.Nodes), want)
	}
	for _, n := range c.Nodes {
		out, err := runCmd(ctx, nil, "docker", "inspect", "-f", "{{.State.Running}}", n)
		if err != nil || strings.TrimSpace(string(out)) != "true" {
			return fmt.Errorf("node container %s is not running", n)
		}
	}
	if _, err := os.Stat(c.Kubeconfig); err != nil {
		if _, err := runCmd(ctx, nil, c.kind, "export", "kubeconfig", "--name", c.Name, "--kubeconfig", c.Kubeconfig); err != nil {
			return fmt.Errorf("export kubeconfig: %w", err)
		}
	}
	client, err := c.Client()
	if err != nil {
		return err
	}
	if _, err := client.Discovery().ServerVersion(); err != nil {
		return fmt.Errorf("API server does not answer: %w", err)
	}
	return nil
}

func (c *Cluster) deleteKind(ctx context.Context) error {
	if _, err := runCmd(ctx, nil, c.kind, "delete", "cluster", "--name", c.Name, "--kubeconfig", c.Kubeconfig); err != nil {
		return fmt.Errorf("delete cluster %q: %w", c.Name, err)
	}
	_ = os.Remove(c.Kubeconfig)
	return nil
}

// RESTConfig returns a client configuration for the cluster.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	cfg, err := LoadKubeconfig(c.Kubeconfig, "")
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", c.Kubeconfig, err)
	}
	return cfg, nil
}

// Client returns a clientset for the cluster.
func (c *Cluster) Client() (kubernetes.Interface, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for cluster %q: %w", c.Name, err)
	}
	return cs, nil
}

// LoadImages copies local docker images into the nodes' containerd, skipping one every node already
// holds with the same image ID (heldOnNodes).
// probegate's own bundled images are brought up to date first, once per process, by hack/images.sh
// from the source this binary carries (cached by content: a second of hashing when current; built
// when missing or when this binary's target source differs from the one they were built from). A
// missing image of the user's fails the load before anything is loaded, in one line saying how to
// get it.
func (c *Cluster) LoadImages(ctx context.Context, images ...string) error {
	if slices.ContainsFunc(images, func(img string) bool { return strings.HasPrefix(img, "probegate/") }) {
		refresh.Do(func() { refresh.err = c.buildBundled(ctx) })
	}
	for _, img := range images {
		if name, ok := onDemandImage(img); ok {
			if err := c.buildOnDemand(ctx, name); err != nil {
				return err
			}
		}
	}
	var unbuilt []string
	ids := map[string]string{}
	for _, img := range images {
		out, err := runCmd(ctx, nil, "docker", "image", "inspect", "-f", "{{.Id}}", img)
		switch {
		case err == nil:
			ids[img] = strings.TrimSpace(string(out))
		case !strings.Contains(strings.ToLower(err.Error()), "no such image"):
			return fmt.Errorf("look up image %s in the local Docker daemon: %w", img, err)
		case strings.HasPrefix(img, "probegate/"):
			unbuilt = append(unbuilt, img)
		default:
			return fmt.Errorf("image %s is not in the local Docker daemon: build or load it there (docker build, docker load), or swap it with --image %s=LOCAL-IMAGE-OR-TARBALL", img, img)
		}
	}
	switch {
	case len(unbuilt) > 0 && refresh.err != nil:
		return refresh.err
	case len(unbuilt) > 0:
		return fmt.Errorf("the bundled images %s are still missing after hack/images.sh built them", strings.Join(unbuilt, ", "))
	case refresh.err != nil:
		c.logger().Warn("could not bring the bundled images up to date; using the ones built before", "err", refresh.err)
	}
	held := c.heldOnNodes(ctx, ids)
	for _, img := range images {
		if held[img] {
			c.logger().Debug("image already on every node", "image", img, "id", ids[img])
			continue
		}
		if _, err := runCmd(ctx, nil, c.kind, "load", "docker-image", "--name", c.Name, img); err != nil {
			return fmt.Errorf("load image %s into cluster %q: %w", img, c.Name, err)
		}
	}
	return nil
}

// logger is the cluster's logger, slog's default when none was given.
func (c *Cluster) logger() *slog.Logger {
	if c.log == nil {
		return slog.Default()
	}
	return c.log
}

// onDemandImages are probegate's images hack/images.sh builds only when asked by name: the Traefik
// of the ingress and gateway front doors, whose cold build takes minutes and which few runs need.
var onDemandImages = []string{"traefik"}

// onDemandImage returns the images.sh name of img when it is one of onDemandImages.
func onDemandImage(img string) (string, bool) {
	repo, _, _ := strings.Cut(strings.TrimPrefix(img, "probegate/"), ":")
	if !strings.HasPrefix(img, "probegate/") || !slices.Contains(onDemandImages, repo) {
		return "", false
	}
	return repo, true
}

// onDemand runs each on-demand image's build once per process.
var onDemand struct {
	sync.Mutex
	done map[string]error
}

// buildOnDemand brings the on-demand image name up to date with hack/images.sh NAME (cached by
// content, like the bundled ones).
func (c *Cluster) buildOnDemand(ctx context.Context, name string) error {
	onDemand.Lock()
	defer onDemand.Unlock()
	if err, ok := onDemand.done[name]; ok {
		return err
	}
	root, err := recipeRoot(os.Getenv("PROBEGATE_ROOT"))
	if err == nil {
		c.logger().Info("bringing an on-demand image up to date (cached by content; a cold build takes minutes)", "image", "probegate/"+name, "root", root)
		_, err = runScript(ctx, root, "images.sh", name)
	}
	if err != nil {
		err = fmt.Errorf("build probegate/%s: %w", name, err)
	}
	if onDemand.done == nil {
		onDemand.done = map[string]error{}
	}
	onDemand.done[name] = err
	return err
}

// refresh runs the bundled images' build once per process.
var refresh struct {
	sync.Once
	err error
}

// buildBundled brings every one of probegate's own images (probegate/NAME:TAG) up to date with
// hack/images.sh from the source tree in $PROBEGATE_ROOT or else the recipe embedded in this binary.
func (c *Cluster) buildBundled(ctx context.Context) error {
	root, err := recipeRoot(os.Getenv("PROBEGATE_ROOT"))
	if err != nil {
		return fmt.Errorf("build the bundled images: %w", err)
	}
	c.logger().Info("bringing the bundled images up to date (cached by content; a cold build takes minutes)", "root", root)
	if _, err := runScript(ctx, root, "images.sh"); err != nil {
		return fmt.Errorf("build the bundled images: %w", err)
	}
	return nil
}

// NodeExec runs a command inside the control-plane node container and returns its stdout.
func (c *Cluster) NodeExec(ctx context.Context, args ...string) ([]byte, error) {
	return c.NodeExecOn(ctx, c.NodeContainer, args...)
}

// NodeExecOn runs a command inside the container of node (a Node name) and returns its stdout. The
// docker client runs in its own process group: only ctx stops it, not a Ctrl-C on the terminal.
func (c *Cluster) NodeExecOn(ctx context.Context, node string, args ...string) ([]byte, error) {
	if c.exec != nil {
		return c.exec(ctx, node, args...)
	}
	return runCmdAlone(ctx, "docker", append([]string{"exec", node}, args...)...)
}

// PauseNode freezes (pause) or resumes node's container with docker pause/unpause: every process of
// the node stops at once, kubelet, kube-proxy and pods alike, as when a machine hangs or drops off
// the network. node is a Node name (the container of the same name). The control-plane node is
// refused: pausing it would stop the API server the harness observes through.
func (c *Cluster) PauseNode(ctx context.Context, node string, pause bool) error {
	if node == c.NodeContainer {
		return fmt.Errorf("node %s runs the control plane: pausing it would stop the API server", node)
	}
	if !slices.Contains(c.Nodes, node) {
		return fmt.Errorf("node %s is not a node container of cluster %q (nodes: %v)", node, c.Name, c.Nodes)
	}
	verb := "unpause"
	if pause {
		verb = "pause"
	}
	if out, err := runCmdAlone(ctx, "docker", verb, node); err != nil {
		return fmt.Errorf("docker %s %s: %w: %s", verb, node, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// listNodes sets Nodes to the cluster's node containers, the control plane first.
func (c *Cluster) listNodes(ctx context.Context) error {
	out, err := runCmd(ctx, nil, c.kind, "get", "nodes", "--name", c.Name)
	if err != nil {
		return fmt.Errorf("list the nodes of cluster %q: %w", c.Name, err)
	}
	nodes := strings.Fields(string(out))
	if !slices.Contains(nodes, c.NodeContainer) {
		return fmt.Errorf("cluster %q has no control-plane node %s (nodes: %v)", c.Name, c.NodeContainer, nodes)
	}
	slices.Sort(nodes)
	c.Nodes = append([]string{c.NodeContainer}, slices.DeleteFunc(nodes, func(n string) bool { return n == c.NodeContainer })...)
	return nil
}

// checkHostPorts fails with the port's name when a host port the kind config maps is taken.
func checkHostPorts(config string) error {
	for _, m := range PortMappings {
		addr := fmt.Sprintf("127.0.0.1:%d", m.HostPort)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("host port %s (%s, mapped by %s) is already in use: free it or change the mapping", addr, m.Purpose, filepath.Base(config))
		}
		l.Close()
	}
	return nil
}

// lock serialises cluster creation and deletion across processes (parallel test packages).
func lock(name string) (func(), error) {
	if err := os.MkdirAll(CacheDir(), 0o755); err != nil {
		return nil, fmt.Errorf("create cache dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(CacheDir(), name+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open cluster lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock cluster %q: %w", name, err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// LoadImageArchive loads an image tarball (docker save) into the cluster's node.
func (c *Cluster) LoadImageArchive(ctx context.Context, path string) error {
	if _, err := runCmd(ctx, nil, c.kind, "load", "image-archive", "--name", c.Name, path); err != nil {
		return fmt.Errorf("load image archive %s into cluster %q: %w", path, c.Name, err)
	}
	return nil
}
